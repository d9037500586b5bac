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

    def test_a_tree_that_keeps_the_layers_passes(self):
        result = run(self.fake_tree({}))
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_the_trace_including_a_producer_fails_naming_file_line_and_rule(self):
        root = self.fake_tree({"src/trace/gpu_codec.h": '#pragma once\n#include "runtime/recorder.h"\n'})
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn(
            'src/trace/gpu_codec.h:2: #include "runtime/recorder.h" (src/runtime/recorder.h)', result.stderr
        )
        self.assertIn("src/trace may include only include/smprof, proto, src/trace", result.stderr)
        self.assertEqual(result.stderr.count("breaks the layers"), 1)

    def test_siblings_may_not_include_each_other(self):
        root = self.fake_tree(
            {"src/analysis/summary/builder.h": '#pragma once\n#include "analysis/timeline/walker.h"\n'}
        )
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/analysis/summary/builder.h:2:", result.stderr)
        self.assertIn("src/analysis/summary may include only", result.stderr)

    def test_analysis_may_not_include_the_runtime(self):
        root = self.fake_tree({"src/analysis/base/fifo.h": '#pragma once\n#include "runtime/recorder.h"\n'})
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/analysis/base/fifo.h:2:", result.stderr)

    def test_collectors_may_not_include_the_session(self):
        root = self.fake_tree({"src/collectors/cpu/sampler.h": '#pragma once\n#include "session/drain.h"\n'})
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/collectors/cpu/sampler.h:2:", result.stderr)

    def test_public_headers_may_not_include_the_schema(self):
        root = self.fake_tree({"include/smprof/smprof.h": '#pragma once\n#include "smprof/trace.pb.h"\n'})
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("include/smprof/smprof.h:2:", result.stderr)

    def test_a_folder_without_a_rule_and_an_unknown_include_fail(self):
        root = self.fake_tree(
            {"src/core/old.h": "#pragma once\n", "src/trace/lost.h": '#include "trace/gone.h"\n'}
        )
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/core/old.h:1: no layer rule covers this folder", result.stderr)
        self.assertIn('src/trace/lost.h:1: #include "trace/gone.h" names no file', result.stderr)

    def test_the_repository_keeps_its_layers(self):
        result = run()
        self.assertEqual(result.returncode, 0, result.stderr)


if __name__ == "__main__":
    unittest.main()
