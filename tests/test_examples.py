"""The README's Python example runs as a script and finds the planted driver."""

from __future__ import annotations

import runpy
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_quickstart_runs_and_ranks_the_planted_driver_first(capsys):
    namespace = runpy.run_path(str(EXAMPLES / "quickstart.py"), run_name="__main__")
    result, region = namespace["result"], namespace["region"]
    assert result.to_frame().iloc[0]["feature"] == "speed"  # severe when speed > 80
    assert result.n_factuals_used == 200 and region.criterion == {"feature": "road_type", "value": "rural"}
    assert "region around row" in capsys.readouterr().out
