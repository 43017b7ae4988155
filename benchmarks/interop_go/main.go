// The grpc-go interop TestService (the stock implementation, interop.NewTestServer),
// served with the options the stock server's command line lacks, for the wire/grpc
// parity suite (tests/test_interop_parity.py, `nox -s parity`):
//
//	interop_go -port N [-max-streams N] [-window BYTES] [-max-recv BYTES]
//	           [-keepalive-min-time D] [-keepalive-permit-without-calls]
//	interop_go -protoset FILE   # write grpc.testing's descriptors (the server has no reflection)
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // SetSendCompressor(gzip) for response_compressed
	"google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func writeProtoset(path string) error {
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(file protoreflect.FileDescriptor)
	add = func(file protoreflect.FileDescriptor) {
		if seen[file.Path()] {
			return
		}
		seen[file.Path()] = true
		imports := file.Imports()
		for i := 0; i < imports.Len(); i++ {
			add(imports.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(file))
	}
	add(testpb.File_grpc_testing_test_proto)
	data, err := proto.Marshal(set)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func main() {
	port := flag.Int("port", 0, "port on 127.0.0.1 (0: any; the address is printed)")
	protoset := flag.String("protoset", "", "write grpc.testing's FileDescriptorSet here and exit")
	maxStreams := flag.Uint("max-streams", 0, "MAX_CONCURRENT_STREAMS (0: grpc-go's default)")
	window := flag.Int("window", 0, "initial stream and connection window (0: default)")
	maxRecv := flag.Int("max-recv", 0, "largest request message (0: default, 4 MiB)")
	minTime := flag.Duration("keepalive-min-time", 0, "enforcement: least time between pings (0: grpc-go's 5m)")
	permit := flag.Bool("keepalive-permit-without-calls", false, "enforcement: allow pings with no call open")
	flag.Parse()
	if *protoset != "" {
		if err := writeProtoset(*protoset); err != nil {
			log.Fatal(err)
		}
		return
	}
	var options []grpc.ServerOption
	if *maxStreams > 0 {
		options = append(options, grpc.MaxConcurrentStreams(uint32(*maxStreams)))
	}
	if *window > 0 {
		options = append(options, grpc.InitialWindowSize(int32(*window)), grpc.InitialConnWindowSize(int32(*window)))
	}
	if *maxRecv > 0 {
		options = append(options, grpc.MaxRecvMsgSize(*maxRecv))
	}
	if *minTime > 0 || *permit {
		policy := keepalive.EnforcementPolicy{MinTime: *minTime, PermitWithoutStream: *permit}
		if policy.MinTime == 0 {
			policy.MinTime = 5 * time.Minute
		}
		options = append(options, grpc.KeepaliveEnforcementPolicy(policy))
	}
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	server := grpc.NewServer(options...)
	testgrpc.RegisterTestServiceServer(server, interop.NewTestServer())
	fmt.Println(listener.Addr().String())
	os.Stdout.Sync()
	log.Fatal(server.Serve(listener))
}
