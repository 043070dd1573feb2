"""twocs.sweep and twocs.validate return DataFrames of what `twocs sweep` and `twocs validate
--json` write, for a tiny study and a tiny validation file."""
import json
import unittest
from pathlib import Path

import pandas as pd

import twocs
from helpers import PLATFORM, TINY_WORKLOAD, folder_with, program

STUDY = f"""study: tiny
base:
  workload: w.yaml
  platform: {PLATFORM}
  set: {{cluster.nodes: 1}}
axes:
  - {{key: model.hidden, values: [128, 256]}}
"""

VALIDATION = f"""runs:
  - name: tiny-iteration
    citation: "made up for the test"
    workload: w.yaml
    platform: {PLATFORM}
    measured: {{iteration_time: 1ms}}
"""


class Sweep(unittest.TestCase):
    def test_one_row_per_scenario_with_the_programs_columns(self):
        with folder_with({"w.yaml": TINY_WORKLOAD, "s.yaml": STUDY}) as d:
            frame = twocs.sweep(f"{d}/s.yaml", jobs=2)
            program("sweep", f"{d}/s.yaml", "--jobs", 1, "--output", f"{d}/cli.csv")
            cli = pd.read_csv(f"{d}/cli.csv", keep_default_na=False, na_values=[""])
        self.assertEqual(list(frame.columns), list(cli.columns))
        self.assertEqual(len(frame), 2)
        self.assertEqual(list(frame["status"]), ["ok", "ok"])
        self.assertEqual(list(frame["model.hidden"]), [128, 256])
        self.assertEqual(list(frame["iteration_time_s"]), list(cli["iteration_time_s"]))

    def test_output_keeps_the_csv_and_a_rerun_resumes_it(self):
        with folder_with({"w.yaml": TINY_WORKLOAD, "s.yaml": STUDY}) as d:
            first = twocs.sweep(f"{d}/s.yaml", output=f"{d}/out.csv")
            self.assertTrue(Path(f"{d}/out.csv").exists())
            again = twocs.sweep(f"{d}/s.yaml", output=f"{d}/out.csv")
        self.assertEqual(list(first["scenario_wall_time_s"]), list(again["scenario_wall_time_s"]))

    def test_a_bad_study_is_an_input_error(self):
        with folder_with({"s.yaml": "study: broken\naxes: 3\n"}) as d:
            with self.assertRaises(twocs.InputError) as raised:
                twocs.sweep(f"{d}/s.yaml")
        self.assertRegex(str(raised.exception), r"s\.yaml:\d+:\d+: error: ")


class Validate(unittest.TestCase):
    def test_the_rows_of_validate_json(self):
        with folder_with({"w.yaml": TINY_WORKLOAD, "runs.yaml": VALIDATION}) as d:
            frame = twocs.validate(f"{d}/runs.yaml")
            program("validate", f"{d}/runs.yaml", "--quiet", "--json", f"{d}/v.json")
            cli = json.loads(Path(f"{d}/v.json").read_text())
        self.assertEqual(list(frame.columns), list(cli["runs"][0].keys()))
        self.assertEqual(list(frame["name"]), ["tiny-iteration"])
        self.assertEqual(frame["predicted_s"][0], cli["runs"][0]["predicted_s"])
        self.assertEqual(frame.attrs["stats"]["iteration"], cli["iteration"])

    def test_an_unknown_run_name_is_an_input_error(self):
        with folder_with({"w.yaml": TINY_WORKLOAD, "runs.yaml": VALIDATION}) as d:
            with self.assertRaises(twocs.InputError):
                twocs.validate(f"{d}/runs.yaml", runs=["no-such-run"])


if __name__ == "__main__":
    unittest.main()
