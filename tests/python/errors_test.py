"""Bad input raises twocs.InputError (a ValueError) naming file:line:column and the fix; a plan
that does not fit raises twocs.OutOfMemoryError with the command line's message."""
import re
import unittest

import twocs
from helpers import PLATFORM, TINY_WORKLOAD, folder_with, program


class BadInput(unittest.TestCase):
    def test_a_misspelt_key_names_its_file_line_and_column(self):
        with folder_with({"w.yaml": TINY_WORKLOAD.replace("tensor: 2", "tensr: 2")}) as d:
            workload = f"{d}/w.yaml"
            with self.assertRaises(twocs.InputError) as raised:
                twocs.run(workload=workload, platform=PLATFORM)
            cli = program("run", "--workload", workload, "--platform", PLATFORM, check=False)
        message = str(raised.exception)
        self.assertRegex(message, r"w\.yaml:3:\d+: error: ")
        self.assertIn("fix:", message)
        self.assertEqual(cli.returncode, 2)
        self.assertEqual(message, cli.stderr.rstrip("\n"))

    def test_input_errors_are_value_errors_and_twocs_errors(self):
        with self.assertRaises(ValueError):
            twocs.run(set={"training.parallelism.tensr": 2})
        self.assertTrue(issubclass(twocs.InputError, twocs.Error))

    def test_a_missing_file(self):
        with self.assertRaises(twocs.InputError):
            twocs.run(workload="/nonexistent/workload.yaml")

    def test_set_takes_a_dict(self):
        with self.assertRaises(TypeError):
            twocs.run(set=["training.parallelism.data=4"])


class OutOfMemory(unittest.TestCase):
    # 13B parameters without tensor parallelism: about 305 GiB per 80 GiB device.
    TOO_BIG = {"training.parallelism.tensor": 1}

    def test_a_plan_that_does_not_fit_raises_with_the_programs_message(self):
        with self.assertRaises(twocs.OutOfMemoryError) as raised:
            twocs.run(set=self.TOO_BIG)
        cli = program("run", "--quiet", "--set", "training.parallelism.tensor=1", check=False)
        self.assertEqual(cli.returncode, 3)
        self.assertEqual(str(raised.exception), cli.stderr.rstrip("\n"))
        self.assertTrue(re.search(r"does not fit in device memory", str(raised.exception)))
        self.assertTrue(issubclass(twocs.OutOfMemoryError, twocs.Error))
        self.assertTrue(issubclass(twocs.OutOfMemoryError, RuntimeError))
        self.assertFalse(issubclass(twocs.OutOfMemoryError, ValueError))

    def test_ignore_memory_simulates_anyway(self):
        r = twocs.run(set=dict(self.TOO_BIG, **{"model.layers": 2}), ignore_memory=True)
        self.assertGreater(r.iteration_time_s, 0)


if __name__ == "__main__":
    unittest.main()
