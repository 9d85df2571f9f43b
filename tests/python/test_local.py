"""unittest, one process (a singleton context, no launcher): bad
arguments raise TypeError / ValueError naming them, library errors map to
their exception classes, arrays are passed without copies, requests and
asyncio complete and cancel cleanly, a finalized context refuses calls."""
import asyncio
import threading
import unittest

import numpy as np

import ucft


class Local(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctx = ucft.init()
        cls.w = cls.ctx.world

    @classmethod
    def tearDownClass(cls):
        cls.ctx.finalize()

    def test_world(self):
        self.assertEqual((self.w.rank, self.w.size), (0, 1))
        self.assertTrue(self.ctx.singleton)
        self.w.f = 3
        self.assertEqual(self.w.f, 3)
        with self.assertRaises(ucft.InvalidParam):
            self.w.f = 0

    def test_every_dtype_without_copy(self):
        for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                   np.uint16, np.uint32, np.uint64, np.float32, np.float64):
            a = np.arange(5, dtype=dt)
            out = np.zeros(7, dtype=dt)  # larger than needed is fine
            self.assertIs(self.w.allreduce(a, out), out)
            np.testing.assert_array_equal(out[:5], a)
            self.assertIs(self.w.bcast(a, root=0), a)

    def test_bad_dtype(self):
        for bad in (np.zeros(3, np.complex64), np.zeros(3, np.float16),
                    np.zeros(3, dtype=">i4"), np.zeros(3, dtype=bool)):
            with self.assertRaisesRegex(TypeError, "sendbuf has dtype"):
                self.w.allreduce(bad)
        with self.assertRaisesRegex(TypeError, "numpy.ndarray, not list"):
            self.w.allreduce([1, 2, 3])
        with self.assertRaisesRegex(TypeError, "recvbuf has dtype int32"):
            self.w.allreduce(np.zeros(3), np.zeros(3, np.int32))

    def test_layout_and_size(self):
        with self.assertRaisesRegex(ValueError, "sendbuf is not C-contig"):
            self.w.allreduce(np.zeros(8)[::2])
        with self.assertRaisesRegex(ValueError, "recvbuf is not C-contig"):
            self.w.allreduce(np.zeros(4), np.zeros((4, 2)).T[0])
        with self.assertRaisesRegex(ValueError, "recvbuf is too small: 3"):
            self.w.allreduce(np.zeros(4), np.zeros(3))
        ro = np.zeros(4)
        ro.flags.writeable = False
        with self.assertRaisesRegex(ValueError, "recvbuf is read-only"):
            self.w.allreduce(np.zeros(4), ro)
        with self.assertRaisesRegex(ValueError, "buf is read-only"):
            self.w.irecv(b"immutable")

    def test_bad_op_root_tag(self):
        with self.assertRaisesRegex(ValueError, "op 'avg' is not one of"):
            self.w.allreduce(np.zeros(2), op="avg")
        with self.assertRaisesRegex(TypeError, "op must be a string"):
            self.w.allreduce(np.zeros(2), op=0)
        with self.assertRaisesRegex(ValueError, "root 1 is out of range"):
            self.w.bcast(np.zeros(2), root=1)
        with self.assertRaisesRegex(ValueError, "dest 5 is out of range"):
            self.w.send(b"x", 5)
        with self.assertRaisesRegex(ValueError, "tag 16777216 is out of"):
            self.w.send(b"x", 0, tag=1 << 24)
        with self.assertRaisesRegex(TypeError, "dest must be an int"):
            self.w.send(b"x", "0")
        # The library's own check: a bitwise op on floats.
        with self.assertRaises(ucft.InvalidParam) as cm:
            self.w.allreduce(np.zeros(2), op="band")
        self.assertEqual(cm.exception.name, "ERR_INVALID_PARAM")
        self.assertIsInstance(cm.exception, ValueError)

    def test_p2p_self_and_truncation(self):
        self.w.send(np.arange(3, dtype=np.int64), 0, tag=1)
        got = np.zeros(3, np.int64)
        st = self.w.recv(got, source=0, tag=1)
        self.assertEqual(st, ucft.Status(0, 1, 24))
        np.testing.assert_array_equal(got, [0, 1, 2])
        req = self.w.isend(np.zeros(4, np.int64), 0, tag=2)
        with self.assertRaises(ucft.Truncated):
            self.w.recv(np.zeros(1, np.int64), source=0, tag=2)
        req.wait()

    def test_cancel_receive(self):
        req = self.w.irecv(np.zeros(2), source=0, tag=77)
        self.assertFalse(req.test())
        req.cancel()
        with self.assertRaises(ucft.Canceled):
            req.wait()
        self.assertTrue(req.done)

    def test_asyncio(self):
        async def run():
            a = await self.w.allreduce_async(np.arange(4, dtype=np.int32),
                                             op="max")
            t = asyncio.create_task(self.w.recv_async(np.zeros(1), tag=55))
            await asyncio.sleep(0.01)
            t.cancel()
            res = await asyncio.gather(t, return_exceptions=True)
            return a, res[0]
        a, res = asyncio.run(run())
        np.testing.assert_array_equal(a, [0, 1, 2, 3])
        self.assertIsInstance(res, asyncio.CancelledError)

    def test_failure_cb_replace(self):
        self.ctx.set_failure_cb(lambda rank: None)
        self.ctx.set_failure_cb(None)
        self.assertEqual(self.ctx.failed_ranks(), [])


class Lifetime(unittest.TestCase):
    def test_finalized_context_refuses(self):
        with ucft.init() as ctx:
            w = ctx.world
        with self.assertRaisesRegex(RuntimeError, "finalized"):
            w.allreduce(np.zeros(1))
        ctx.finalize()  # idempotent

    def test_callback_thread(self):
        # No failure in a singleton; the callback must not run at all.
        seen = []
        with ucft.init(failure_cb=lambda r: seen.append(
                threading.get_ident())) as ctx:
            ctx.world.barrier()
            ctx.progress()
        self.assertEqual(seen, [])


if __name__ == "__main__":
    unittest.main()
