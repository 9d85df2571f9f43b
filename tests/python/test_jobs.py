"""unittest: real ucftrun jobs of Python ranks, with real kills. Each test
starts a job and asserts what every survivor printed; the rank programs
(job_*.py) check values themselves and exit 1 on a wrong one. Needs
UCFT_RUN (ucftrun), UCFT_LIBRARY and PYTHONPATH (set by ctest)."""
import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.environ["UCFT_RUN"]
PY = sys.executable


def job(n, argv, kills=(), timeout=90):
    cmd = [RUN, "-n", str(n), "--tag-output", "--timeout", str(timeout)]
    if kills:  # counted from the end of start-up, whatever the load
        cmd += ["--times-from", "connected"]
    for k in kills:
        cmd += ["--kill", k]
    p = subprocess.run(cmd + [PY] + argv, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True,
                       timeout=timeout + 30)
    return p.returncode, p.stdout


class Jobs(unittest.TestCase):
    def assertResults(self, out, ranks):
        got = sorted(int(m.group(1)) for m in
                     re.finditer(r"^\[\d+\] RESULT (\d+) ok", out, re.M))
        self.assertEqual(got, sorted(ranks), out)

    def test_values(self):
        rc, out = job(4, [os.path.join(HERE, "job_values.py")])
        self.assertEqual(rc, 0, out)
        self.assertResults(out, range(4))

    def test_kill(self):
        rc, out = job(4, [os.path.join(HERE, "job_kill.py"), "2"],
                      kills=["2@3"])
        self.assertEqual(rc, 0, out)
        self.assertResults(out, [0, 1, 3])

    def test_beyond_f(self):
        rc, out = job(4, [os.path.join(HERE, "job_kill.py"), "2", "beyond"],
                      kills=["2@3", "3@3"])
        self.assertEqual(rc, 0, out)
        self.assertResults(out, [0, 1])

    def test_asyncio_kill(self):
        rc, out = job(4, [os.path.join(HERE, "job_async.py"), "1"],
                      kills=["1@3"])
        self.assertEqual(rc, 0, out)
        self.assertResults(out, [0, 2, 3])


class Examples(unittest.TestCase):
    def test_allreduce_example(self):
        # The command of the README, 8 ranks, two kills.
        rc, out = job(8, ["-m", "ucft.examples.allreduce"],
                      kills=["3@1.5", "6@2.5"])
        self.assertEqual(rc, 0, out)
        self.assertNotIn("WRONG", out)
        last = re.findall(r"^\[(\d)\] iteration 79: sum  25 of 6 live ranks "
                          r"\(correct\)$", out, re.M)
        self.assertEqual(sorted(map(int, last)), [0, 1, 2, 4, 5, 7], out)

    def test_service_example(self):
        # 100 reductions 40 ms apart: at least 4 s after start-up, so the
        # kill at 2 s lands while they run.
        rc, out = job(4, ["-m", "ucft.examples.service"], kills=["2@2"])
        self.assertEqual(rc, 0, out)
        self.assertNotIn("WRONG", out)
        served = re.findall(r"^\[(\d)\] served (\d+) requests", out, re.M)
        self.assertEqual(sorted(int(r) for r, _ in served), [0, 1, 3], out)
        self.assertTrue(all(int(k) > 0 for _, k in served), out)


if __name__ == "__main__":
    unittest.main()
