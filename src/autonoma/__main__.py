from autonoma.cli import main

main()
