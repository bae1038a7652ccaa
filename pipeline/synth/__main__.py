"""``python -m pubproof.pipeline.synth OUT.pcap ...``: write a synthetic capture."""

import sys

from pubproof.pipeline.synth.command import main

sys.exit(main())
