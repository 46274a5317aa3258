// The one test object that holds the checkout's path (tests/unit/source_dir.h).
#include "unit/source_dir.h"

const char* denote_test::source_dir() { return DENOTE_TEST_SOURCE_DIR; }
