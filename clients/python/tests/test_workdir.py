"""The code folder as the client reads, hashes and archives it (tuneplane_client/workdir.py),
without a server: the archive is ustar that tar reads back as the folder; the same folder
gives the same bytes and hash, whatever its times; a link to a file inside is sent as that
file; a link out, a dangling link, a link to a folder, a FIFO, a path ustar cannot hold and a
folder over the limits are refused naming the path and the rule. The hash against the
server's is checked end to end (test_serve.py: upload_workdir compares the two)."""

import hashlib
import io
import os
import tarfile
import tempfile
import unittest

import support  # noqa: F401  (puts the package beside the tests first on sys.path)

from tuneplane_client import Client, WorkdirError
from tuneplane_client.workdir import read_workdir, tree_sha256, write_tar


class WorkdirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="tuneplane-workdir-")
        self.base = self._tmp.name
        self.code = self.folder("code", {"train.py": "print('hi')\n",
                                         "lib/config.txt": "lr=0.1\n"})

    def tearDown(self):
        self._tmp.cleanup()

    def folder(self, name, files):
        root = os.path.join(self.base, name)
        os.makedirs(root, exist_ok=True)
        for path, content in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(content)
        return root

    def refused(self, code, *, max_bytes=1 << 30, max_files=100_000):
        with self.assertRaises(WorkdirError) as caught:
            read_workdir(self.code, max_bytes, max_files)
        self.assertEqual((caught.exception.code, caught.exception.field), (code, "workdir"))
        self.assertIsNone(caught.exception.status)
        self.assertFalse(caught.exception.transient)
        return caught.exception.message

    def test_the_archive_is_ustar_of_the_folder(self):
        os.chmod(os.path.join(self.code, "train.py"), 0o750)
        tree = read_workdir(self.code)
        self.assertEqual((tree.files, tree.folders, tree.bytes), (2, 1, 19))
        self.assertRegex(tree.reference, r"^sha256:[0-9a-f]{64}$")
        archive = write_tar(tree)
        self.assertEqual(archive[257:265], b"ustar\x0000")
        self.assertEqual(len(archive) % 512, 0)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            members = {m.name: m for m in tar.getmembers()}
            self.assertEqual(sorted(members), ["lib", "lib/config.txt", "train.py"])
            self.assertTrue(members["lib"].isdir())
            self.assertEqual(members["train.py"].mode, 0o755)
            self.assertEqual(members["lib/config.txt"].mode, 0o644)
            self.assertEqual(tar.extractfile("lib/config.txt").read(), b"lr=0.1\n")

    def test_the_hash_follows_the_rules(self):
        # workdir_tree.h: 'd'/'f', mode, path, NUL, [size, NUL, content], in path order.
        entries = [(b"a", True, False, b""), (b"a/x", False, True, b"12")]
        expected = hashlib.sha256(b"d 755 a\0f 755 a/x\0" + b"2\0" + b"12").hexdigest()
        self.assertEqual(tree_sha256(entries), expected)

    def test_the_same_folder_gives_the_same_bytes(self):
        first = read_workdir(self.code)
        os.utime(os.path.join(self.code, "train.py"), (1, 1))
        again = read_workdir(self.code)
        self.assertEqual(first.reference, again.reference)
        self.assertEqual(write_tar(first), write_tar(again))
        with open(os.path.join(self.code, "train.py"), "a") as f:
            f.write("# changed\n")
        self.assertNotEqual(read_workdir(self.code).reference, first.reference)

    def test_a_link_to_a_file_inside_is_the_file(self):
        os.symlink("lib/config.txt", os.path.join(self.code, "config.txt"))
        tree = read_workdir(self.code)
        self.assertIn((b"config.txt", False, False, b"lr=0.1\n"), tree.entries)

    def test_a_link_out_is_refused_naming_it(self):
        outside = self.folder("elsewhere", {"secret.txt": "no\n"})
        os.symlink(os.path.join(outside, "secret.txt"), os.path.join(self.code, "data.txt"))
        message = self.refused("workdir.symlink")
        self.assertIn("'data.txt'", message)
        self.assertIn("outside the folder", message)

    def test_dangling_links_and_links_to_folders_are_refused(self):
        os.symlink("nowhere", os.path.join(self.code, "gone"))
        self.assertIn("does not exist", self.refused("workdir.symlink"))
        os.unlink(os.path.join(self.code, "gone"))
        os.symlink("lib", os.path.join(self.code, "lib2"))
        self.assertIn("not a regular file", self.refused("workdir.symlink"))

    def test_a_fifo_is_refused(self):
        os.mkfifo(os.path.join(self.code, "pipe"))
        self.assertIn("'pipe'", self.refused("workdir.special_file"))

    def test_paths_ustar_cannot_hold_are_refused(self):
        self.folder("code", {"x" * 120: "long\n"})
        self.assertIn("ustar", self.refused("workdir.invalid_path"))

    def test_control_characters_are_refused(self):
        self.folder("code", {"a\tb.py": ""})
        self.assertIn("control character", self.refused("workdir.invalid_path"))

    def test_the_limits(self):
        self.assertIn("server.workdir_max_bytes", self.refused("workdir.too_large", max_bytes=18))
        read_workdir(self.code, 19, 3)
        self.assertIn("server.workdir_max_files",
                      self.refused("workdir.too_many_files", max_files=2))

    def test_nothing_is_sent_for_a_refused_folder(self):
        os.mkfifo(os.path.join(self.code, "pipe"))
        # A server that cannot be reached: the refusal comes first, so no connection is tried.
        client = Client("http://127.0.0.1:9", "token")
        with self.assertRaises(WorkdirError):
            client.upload_workdir(self.code)

    def test_submit_with_a_workdir_takes_a_dict(self):
        client = Client("http://127.0.0.1:9", "token")
        with self.assertRaises(TypeError) as caught:
            client.submit("apiVersion: tuneplane.io/v1\n", workdir=self.code)
        self.assertIn("upload_workdir", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
