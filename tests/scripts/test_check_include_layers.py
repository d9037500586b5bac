"""scripts/check_include_layers.py: a small fake tree with one violation fails, naming
file:line and the rule; the tree without it, and the real tree, pass.

Runs under ctest (tests/cpp/CMakeLists.txt) and under pytest."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "check_include_layers.py"

FAKE_TREE = {
    "include/smprof/status.h": "#pragma once\n",
    "proto/smprof/trace.proto": 'syntax = "proto3";\n',
    "src/trace/records.h": '#pragma once\n#include "smprof/status.h"\n',
    "src/trace/frame_codec.h": '#pragma once\n#include "smprof/trace.pb.h"\n#include "trace/records.h"\n',
    "src/runtime/recorder.h": '#pragma once\n#include "trace/records.h"\n',
    "src/collectors/cpu/sampler.h": '#pragma once\n#include "runtime/recorder.h"\n',
    "src/session/session.cc": '#include "collectors/cpu/sampler.h"\n#include "runtime/recorder.h"\n',
    "src/bindings/module.cc": '#include "session/drain.h"\n#include "analysis/summary/builder.h"\n',
    "src/session/drain.h": "#pragma once\n",
    "src/analysis/base/fifo.h": "#pragma once\n",
    "src/analysis/job/reader.h": '#include "analysis/base/fifo.h"\n#include "trace/records.h"\n',
    "src/analysis/summary/builder.h": '#pragma once\n#include "analysis/job/reader.h"\n',
    "src/analysis/timeline/walker.h": '#pragma once\n#include "analysis/job/reader.h"\n',
    "src/testing/writer.h": '#pragma once\n#include "smprof/trace.pb.h"\n#include "trace/records.h"\n',
}


def run(root=None):
    command = [sys.executable, str(SCRIPT)] + (["--root", str(root)] if root else [])
    return subprocess.run(command, capture_output=True, text=True)


class CheckIncludeLayers(unittest.TestCase):
    def fake_tree(self, extra):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        root = Path(tmp.name)
        for path, text in {**FAKE_TREE, **extra}.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        return root

    def failures(self, extra):
        """stderr of the check on the fake tree plus `extra`, which must fail."""
        result = run(self.fake_tree(extra))
        self.assertEqual(result.returncode, 1, result.stderr)
        return result.stderr

    def test_a_tree_that_keeps_the_layers_passes(self):
        result = run(self.fake_tree({}))
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_the_trace_including_a_producer_fails_naming_file_line_and_rule(self):
        stderr = self.failures({"src/trace/gpu_codec.h": '#pragma once\n#include "runtime/recorder.h"\n'})
        self.assertIn(
            'src/trace/gpu_codec.h:2: #include "runtime/recorder.h" (src/runtime/recorder.h)', stderr
        )
        self.assertIn("src/trace may include only include/smprof, proto, src/trace", stderr)
        self.assertEqual(stderr.count("breaks the layers"), 1)

    def test_each_rule_fails_on_its_violation(self):
        violations = {
            # siblings may not include each other
            "src/analysis/summary/builder.h": '#include "analysis/timeline/walker.h"',
            # analysis reads traces only
            "src/analysis/base/fifo.h": '#include "runtime/recorder.h"',
            # collectors never include the session
            "src/collectors/cpu/sampler.h": '#include "session/drain.h"',
            # the public headers never include the schema
            "include/smprof/smprof.h": '#include "smprof/trace.pb.h"',
            # the test-only extension writes traces, it starts no session
            "src/testing/writer.h": '#include "session/drain.h"',
            # nothing shipped includes the test-only extension
            "src/bindings/module.cc": '#include "testing/writer.h"',
        }
        for path, line in violations.items():
            with self.subTest(path=path):
                stderr = self.failures({path: "#pragma once\n" + line + "\n"})
                self.assertIn(f"{path}:2: {line}", stderr)
                self.assertEqual(stderr.count("breaks the layers"), 1)

    def test_a_folder_without_a_rule_and_an_unknown_include_fail(self):
        stderr = self.failures(
            {"src/core/old.h": "#pragma once\n", "src/trace/lost.h": '#include "trace/gone.h"\n'}
        )
        self.assertIn("src/core/old.h:1: no layer rule covers this folder", stderr)
        self.assertIn('src/trace/lost.h:1: #include "trace/gone.h" names no file', stderr)

    def test_the_repository_keeps_its_layers(self):
        result = run()
        self.assertEqual(result.returncode, 0, result.stderr)


if __name__ == "__main__":
    unittest.main()
