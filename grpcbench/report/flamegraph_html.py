"""The HTML report's flame graphs: one per profiled cell, interactive, offline.

Each cell's tree (``profile.flame``) is embedded as JSON and drawn by a few
dozen lines of inline JavaScript as an icicle (callers above callees, width =
share of the samples): click a box to zoom into it, click an ancestor (drawn
full width above) to zoom out, type in the search box to highlight every
box whose name contains the text and read what share of the samples they
cover. No library and no network, so the report stays one file that opens
anywhere. ``#flame-search=TEXT`` in the page's address searches every graph
on load (the browser test uses it; so can a link someone shares).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grpcbench.model.results import LevelResult
from grpcbench.profile.flame import flame_json
from grpcbench.profile.model import Profile

FLAME_STYLE = """
.flame { margin: .5rem 0 1.5rem; }
.flame-tools { font-size: .85rem; margin-bottom: .3rem; }
.flame-body { position: relative; overflow: hidden; border: 1px solid #ddd; }
.flame-box { position: absolute; height: 17px; box-sizing: border-box; border: 1px solid #fff;
  font: 11px monospace; line-height: 15px; overflow: hidden; white-space: nowrap;
  padding: 0 2px; cursor: pointer; background: #f0a860; }
.flame-box.lib { background: #c8c8d8; } .flame-box.ancestor { opacity: .6; }
.flame-box.match { background: #d04fd0; color: #fff; }
"""

FLAME_SCRIPT = """
(() => {
  const ROW = 17;
  function link(node, parent) {
    node.parent = parent;
    for (const child of node.c || []) link(child, node);
  }
  function draw(graph) {
    const body = graph.el.querySelector(".flame-body");
    body.textContent = "";
    const focus = graph.focus;
    const ancestors = [];
    for (let n = focus.parent; n; n = n.parent) ancestors.unshift(n);
    let depth = 0;
    const put = (node, left, width, cls) => {
      const box = document.createElement("div");
      box.className = "flame-box" + (node.n.startsWith("[") ? " lib" : "") + cls;
      box.style.left = left + "%";
      box.style.width = width + "%";
      box.style.top = depth * ROW + "px";
      const share = (100 * node.v / graph.root.v).toFixed(1);
      box.title = `${node.n}: ${node.v} samples, ${share}%`;
      box.textContent = node.n;
      box.dataset.name = node.n.toLowerCase();
      box.onclick = () => { graph.focus = node; draw(graph); };
      body.appendChild(box);
    };
    for (const node of ancestors) { put(node, 0, 100, " ancestor"); depth++; }
    let deepest = depth;
    const walk = (node, left, width, level) => {
      if (width < 0.05) return;
      depth = level; put(node, left, width, "");
      deepest = Math.max(deepest, level);
      let x = left;
      for (const child of node.c || []) {
        const w = width * child.v / node.v;
        walk(child, x, w, level + 1);
        x += w;
      }
    };
    walk(focus, 0, 100, depth);
    body.style.height = (deepest + 1) * ROW + "px";
    search(graph, graph.term);
  }
  function search(graph, term) {
    graph.term = term || "";
    const needle = graph.term.toLowerCase();
    const boxes = graph.el.querySelectorAll(".flame-box");
    let shown = 0;
    for (const box of boxes) {
      const hit = needle !== "" && box.dataset.name.includes(needle);
      box.classList.toggle("match", hit);
      if (hit) shown++;
    }
    // Share of all samples under a matching box (outermost matches only).
    let covered = 0;
    const walk = (node) => {
      if (needle !== "" && node.n.toLowerCase().includes(needle)) { covered += node.v; return; }
      for (const child of node.c || []) walk(child);
    };
    walk(graph.root);
    const status = graph.el.querySelector(".flame-status");
    const noun = shown === 1 ? "box" : "boxes";
    const share = (100 * covered / graph.root.v).toFixed(1);
    status.textContent = needle === "" ? "" : `matched: ${share}% of samples (${shown} ${noun})`;
    graph.el.dataset.matched = shown;
  }
  window.addEventListener("load", () => {
    const graphs = [];
    for (const el of document.querySelectorAll(".flame")) {
      const root = JSON.parse(el.querySelector("script").textContent);
      link(root, null);
      const graph = {el, root, focus: root, term: ""};
      const box = el.querySelector(".flame-search");
      box.addEventListener("input", e => search(graph, e.target.value));
      el.querySelector(".flame-reset").onclick = () => { graph.focus = root; draw(graph); };
      draw(graph);
      graphs.push(graph);
    }
    const wanted = new URLSearchParams(location.hash.slice(1)).get("flame-search");
    if (wanted) for (const graph of graphs) {
      graph.el.querySelector(".flame-search").value = wanted;
      search(graph, wanted);
    }
    const drawn = graphs.filter(g => g.el.querySelector(".flame-box")).length;
    document.body.dataset.flamegraphs = `${drawn} drawn of ${graphs.length}`;
  });
})();
"""


def _embedded(data: dict[str, Any]) -> str:
    """JSON inside a <script> element: ``</`` must not end it early."""
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


def _graph(title: str, profile: Profile) -> str:
    tree = flame_json(Path(profile.file), title)
    head = (
        f'<h3>{html.escape(title)}</h3><p class="notes">profiled at {profile.rate_hz} Hz,'
        f" {profile.samples:,} samples; {html.escape(profile.file)}</p>"
    )
    if tree is None:
        return head + "<p>Its collapsed-stack file is gone, so there is no flame graph.</p>"
    return (
        f'{head}<div class="flame" title="{html.escape(title)}">'
        '<div class="flame-tools"><input class="flame-search" type="search"'
        ' placeholder="search functions"> <button class="flame-reset">reset zoom</button>'
        ' <span class="flame-status"></span></div><div class="flame-body"></div>'
        f'<script type="application/json">{_embedded(tree)}</script></div>'
    )


def flame_graphs(levels: Sequence[LevelResult]) -> list[tuple[str, str]]:
    """(title, HTML) per profiled cell: server x level x repeat, then the generator's."""
    graphs = []
    for role, whose in (("profile", "{server}"), ("generator_profile", "the generator ({server})")):
        for level in levels:
            saved = getattr(level, role)
            if not saved:
                continue
            title = f"{whose.format(server=level.server)} at {level.describe()}" + (
                f", repeat {level.repeat + 1}" if level.repeat else ""
            )
            graphs.append((title, _graph(title, Profile.from_json(saved))))
    return graphs


def flame_section(levels: Sequence[LevelResult]) -> str:
    graphs = flame_graphs(levels)
    if not graphs:
        return ""
    return (
        "<h2>Flame graphs</h2><p>Width is the share of a cell's samples; callers above callees;"
        " grey boxes are library internals folded into one. Click to zoom, search to"
        " highlight.</p>" + "".join(body for _, body in graphs)
    )
