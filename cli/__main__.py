from pubproof.main import main

raise SystemExit(main())
