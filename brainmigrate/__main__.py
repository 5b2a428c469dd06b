from brainmigrate.cli import main

main()
