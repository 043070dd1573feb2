"""twocs.run gives what `twocs run --json` writes, for the default scenario, --set and --fold."""
import unittest

import twocs
from helpers import cli_summary

# The summary's fields that depend on the host (how long it took), not on the simulation.
HOST_FIELDS = {"wall_time_s"}


def simulated(summary):
    return {k: v for k, v in summary.items() if k not in HOST_FIELDS}


class DefaultScenario(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.result = twocs.run()
        cls.cli = cli_summary()

    def test_iteration_time_equals_the_programs(self):
        self.assertEqual(self.result.iteration_time_s, self.cli["iteration_time_s"])

    def test_every_summary_field_equals_the_programs(self):
        self.assertEqual(simulated(self.result.to_dict()), simulated(self.cli))

    def test_fields_are_attributes_and_nested_objects_dicts(self):
        self.assertIsInstance(self.result.breakdown_s, dict)
        self.assertGreater(self.result.breakdown_s["compute"], 0)
        self.assertIn("data", self.result.exposed_comm_by_kind_s)
        self.assertTrue(0 < self.result.mfu < 1)
        with self.assertRaises(AttributeError):
            _ = self.result.no_such_field

    def test_memory_per_stage(self):
        stages = self.result.memory_stages()
        self.assertEqual(list(stages["stage"]), [s["stage"] for s in self.cli["memory"]["stages"]])
        self.assertEqual(stages["total_bytes"].max(), self.cli["memory"]["peak_bytes"])

    def test_timeline_holds_every_simulated_task(self):
        t = self.result.timeline()
        self.assertEqual(len(t), self.result.simulated_tasks)
        for column in ("device", "stream", "kind", "name", "start_s", "end_s"):
            self.assertIn(column, t.columns)
        self.assertAlmostEqual(t["end_s"].max(), self.result.iteration_time_s, places=12)
        self.assertTrue((t["end_s"] >= t["start_s"]).all())
        self.assertEqual(set(t["kind"].unique()) - {"compute", "transfer", "host"}, set())
        self.assertEqual(set(self.result.timeline(devices=[0])["device"].unique()), {0})


class Overrides(unittest.TestCase):
    def test_set_changes_the_result_as_the_command_lines_set_does(self):
        settings = {"cluster.network.bandwidth": "5GB/s", "training.parallelism.data": 2}
        slow = twocs.run(set=settings)
        cli = cli_summary("--set", "cluster.network.bandwidth=5GB/s", "--set", "training.parallelism.data=2")
        self.assertEqual(slow.iteration_time_s, cli["iteration_time_s"])
        self.assertGreater(slow.exposed_comm_by_kind_s["data"], twocs.run().exposed_comm_by_kind_s["data"])

    def test_numbers_are_given_as_the_command_line_would_write_them(self):
        self.assertEqual(twocs.run(set={"training.global_batch": 32}).plan["global_batch"], 32)
        self.assertEqual(twocs.run(set={"training.global_batch": "32"}).plan["global_batch"], 32)


class Folding(unittest.TestCase):
    def test_each_fold_mode_matches_the_programs(self):
        for mode in ("on", "off", "auto"):
            with self.subTest(fold=mode):
                r = twocs.run(fold=mode)
                cli = cli_summary("--fold", mode)
                self.assertEqual(r.iteration_time_s, cli["iteration_time_s"])
                self.assertEqual(r.approximations["folded"], cli["approximations"]["folded"])
        self.assertTrue(twocs.run(fold="on").approximations["folded"])
        self.assertFalse(twocs.run(fold="off").approximations["folded"])

    def test_an_unknown_mode_is_an_input_error(self):
        with self.assertRaises(twocs.InputError) as raised:
            twocs.run(fold="sometimes")
        self.assertIn("--fold", str(raised.exception))


class Replay(unittest.TestCase):
    def test_a_replayed_run_matches_the_programs_and_every_micro_batch(self):
        plan = {"model.layers": 8, "training.parallelism.pipeline": 4, "training.global_batch": 96,
                "device.speed_variation.spread": 0}
        args = [a for key, value in plan.items() for a in ("--set", f"{key}={value}")]
        on = twocs.run(set=plan, replay="on")
        self.assertTrue(on.approximations["replay"]["replayed"])
        self.assertEqual(on.iteration_time_s, cli_summary(*args, "--replay", "on")["iteration_time_s"])
        self.assertAlmostEqual(on.iteration_time_s, twocs.run(set=plan, replay="off").iteration_time_s, delta=1e-9)

    def test_an_unknown_mode_is_an_input_error(self):
        with self.assertRaises(twocs.InputError) as raised:
            twocs.run(replay="sometimes")
        self.assertIn("--replay", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
