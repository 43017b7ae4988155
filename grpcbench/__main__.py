from grpcbench.cli.entry import main

main()
