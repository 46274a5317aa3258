// The source tree's root for the tests' data files, as DENOTE_SOURCE_DIR (used as
// std::string(DENOTE_SOURCE_DIR) + "/tests/data/..."). The path is compiled into one object only
// (tests/unit/source_dir.cc), so that every other test object is the same in every checkout and
// ccache shares it between clones at different paths (docs/PERF.md "CI time").
#pragma once

namespace denote_test {
const char* source_dir();
}  // namespace denote_test

#define DENOTE_SOURCE_DIR (::denote_test::source_dir())
