from grpcbench.cli import main

main()
