"""What the tests share and are not tests themselves: builders of captures and streams,
Hypothesis strategies, oracles, the built site, the live harnesses. Test files import from
here (``from support.builds import pure_only``), never from another test file
(``tests/test_layers.py`` holds it)."""
