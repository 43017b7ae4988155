// A minimal helloworld.Greeter/SayHello server in Go, for the load-generator
// benchmark (nox -s loadgen): its cost per call is far below a Python client's,
// so the client, not the server, is what the benchmark measures.
//
// No generated code: a pass-through codec hands the handler the request bytes,
// and protowire reads the name and writes "Hello, <name>!" as a HelloReply.
// It prints `READY {"port": N}` once it listens, like grpcbench's own servers.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/encoding/protowire"
)

// rawCodec replaces the proto codec: messages stay serialized bytes.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }

func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// requestName reads field 1 (name) of a HelloRequest.
func requestName(in []byte) string {
	for len(in) > 0 {
		num, typ, n := protowire.ConsumeTag(in)
		if n < 0 {
			return ""
		}
		in = in[n:]
		if num == 1 && typ == protowire.BytesType {
			value, m := protowire.ConsumeBytes(in)
			if m < 0 {
				return ""
			}
			return string(value)
		}
		m := protowire.ConsumeFieldValue(num, typ, in)
		if m < 0 {
			return ""
		}
		in = in[m:]
	}
	return ""
}

func sayHello(_ any, _ context.Context, decode func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var request []byte
	if err := decode(&request); err != nil {
		return nil, err
	}
	reply := protowire.AppendTag(nil, 1, protowire.BytesType)
	reply = protowire.AppendString(reply, "Hello, "+requestName(request)+"!")
	return &reply, nil
}

var greeter = grpc.ServiceDesc{
	ServiceName: "helloworld.Greeter",
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "SayHello", Handler: sayHello}},
	Metadata:    "helloworld.proto",
}

func main() {
	port := flag.Int("port", 0, "port on 127.0.0.1 (0 = any free port)")
	flag.Parse()
	encoding.RegisterCodec(rawCodec{})
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	server := grpc.NewServer()
	server.RegisterService(&greeter, struct{}{})
	fmt.Printf("READY {\"port\": %d}\n", listener.Addr().(*net.TCPAddr).Port)
	if err := server.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
