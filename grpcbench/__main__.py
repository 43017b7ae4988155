from grpcbench.cli.app import main

main()
