"""The data model: what a run plans (levels, load settings, scenarios), what it records
(results, verdicts, thresholds, events) and the results file's format. Pure data and
its rules; it starts nothing, so reports and comparisons can load it cheaply."""
