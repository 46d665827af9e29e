from myrm_tui.cli import main

main()
