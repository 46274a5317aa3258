// include/denote/base/file.h: bounded whole-file reads and .gz files (issue 54: VNN-COMP's benchmarks
// as published, net.onnx.gz / prop.vnnlib.gz, and instance CSVs that name the files without the
// suffix). The compressed files are written here by zlib's gzwrite (its own encoder, not the reader
// under test); the loaders' results are compared with the uncompressed files'.
#include <gtest/gtest.h>

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "denote/base/file.h"
#include "denote/io/json.h"
#include "denote/verify/vnnlib.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::run_cli;
using testing::slurp;
using testing::temp_dir;

const std::string kData = std::string(DENOTE_SOURCE_DIR) + "/tests/data/";

// `text` gzipped into `path` by zlib (level 6), `members` times over (concatenated members).
void write_gz(const std::filesystem::path& path, const std::string& text, int members = 1) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).flush();
  for (int k = 0; k < members; ++k) {
    gzFile f = gzopen(path.c_str(), "ab6");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
  }
}

TEST(FileGzip, ReadsWhatZlibWrote) {
  const auto dir = temp_dir();
  std::string text;
  for (int i = 0; i < 100000; ++i) text += std::to_string(i * 7919 % 10007) + (i % 13 ? " " : "\n");
  write_gz(dir / "a.txt.gz", text);
  auto r = read_file_bounded((dir / "a.txt.gz").string(), 1 << 30);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(*r, text);
  write_gz(dir / "two.txt.gz", text, 2);  // two members read as one stream, as gzip -d does
  auto two = read_file_bounded((dir / "two.txt.gz").string(), 1 << 30);
  ASSERT_TRUE(two.ok()) << two.message();
  EXPECT_EQ(*two, text + text);
  write_gz(dir / "empty.gz", "");
  auto empty = read_file_bounded((dir / "empty.gz").string(), 10);
  ASSERT_TRUE(empty.ok()) << empty.message();
  EXPECT_EQ(*empty, "");
}

TEST(FileGzip, TheBoundAppliesToTheInflatedBytes) {
  const auto dir = temp_dir();
  write_gz(dir / "bomb.gz", std::string(10 << 20, 'x'));  // 10 MiB of one byte: about 10 KiB compressed
  EXPECT_LT(std::filesystem::file_size(dir / "bomb.gz"), 100000u);
  auto r = read_file_bounded((dir / "bomb.gz").string(), 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
  EXPECT_NE(r.message().find("inflates past 1048576 bytes"), std::string::npos) << r.message();
  EXPECT_TRUE(read_file_bounded((dir / "bomb.gz").string(), 10 << 20).ok());  // exactly at the bound
  auto plain = read_file_bounded(kData + "vnncomp2021_test/test_prop.vnnlib", 10);
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.status().code(), ErrorCode::kResource);
}

TEST(FileGzip, TruncatedAndCorruptStreamsAreErrorsWithTheirOffset) {
  const auto dir = temp_dir();
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i);
  write_gz(dir / "t.gz", text);
  const std::string z = slurp(dir / "t.gz");
  std::ofstream(dir / "cut.gz", std::ios::binary) << z.substr(0, z.size() / 2);
  auto cut = read_file_bounded((dir / "cut.gz").string(), 1 << 30);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.message().find("truncated gzip data at byte"), std::string::npos) << cut.message();
  EXPECT_NE(cut.message().find("cut.gz"), std::string::npos) << cut.message();
  std::string bad = z;
  for (size_t i = 20; i < 60; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  std::ofstream(dir / "bad.gz", std::ios::binary) << bad;
  auto corrupt = read_file_bounded((dir / "bad.gz").string(), 1 << 30);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.message().find("gzip data at byte"), std::string::npos) << corrupt.message();
  std::ofstream(dir / "not.gz", std::ios::binary) << "plain text, not gzip";
  EXPECT_FALSE(read_file_bounded((dir / "not.gz").string(), 1 << 30).ok());
  EXPECT_FALSE(read_file_bounded((dir / "missing.gz").string(), 1 << 30).ok());
  EXPECT_FALSE(read_file_bounded(dir.string() + "/", 1 << 30).ok());  // a directory
}

TEST(FileGzip, ModelsAndPropertiesLoadGzipped) {
  const auto dir = temp_dir();
  write_gz(dir / "net.onnx.gz", slurp(kData + "vnncomp2021_test/test_small.onnx"));
  write_gz(dir / "prop.vnnlib.gz", slurp(kData + "vnncomp2021_test/test_small.vnnlib"));
  auto m = load_model_file((dir / "net.onnx.gz").string());
  auto want = load_model_file(kData + "vnncomp2021_test/test_small.onnx");
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_TRUE(want.ok()) << want.message();
  EXPECT_EQ(write_model_json(*m), write_model_json(*want));
  auto p = load_vnnlib_file((dir / "prop.vnnlib.gz").string());
  auto pw = load_vnnlib_file(kData + "vnncomp2021_test/test_small.vnnlib");
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->cases.size(), pw->cases.size());
  EXPECT_EQ(p->cases[0].lo_out, pw->cases[0].lo_out);
  EXPECT_EQ(p->cases[0].hi_out, pw->cases[0].hi_out);
  write_gz(dir / "huge.vnnlib.gz", std::string(65 << 20, ' '));  // past the parser's 64 MiB once inflated
  auto huge = load_vnnlib_file((dir / "huge.vnnlib.gz").string());
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), ErrorCode::kResource);
}

TEST(FileGzip, CampaignCsvNamesThePlainFilesOfGzippedOnes) {
  // As VNN-COMP publishes a benchmark: the CSV says test_small.onnx, the folder holds test_small.onnx.gz.
  const auto dir = temp_dir() / "campaign_gz";
  std::filesystem::create_directories(dir);
  write_gz(dir / "test_small.onnx.gz", slurp(kData + "vnncomp2021_test/test_small.onnx"));
  write_gz(dir / "test_small.vnnlib.gz", slurp(kData + "vnncomp2021_test/test_small.vnnlib"));
  std::ofstream(dir / "instances.csv") << "test_small.onnx,test_small.vnnlib,60\n";
  const auto r = run_cli("verify --instances " + (dir / "instances.csv").string() + " --jobs 1");
  const auto want = run_cli("verify " + kData + "vnncomp2021_test/test_small.onnx " + kData +
                            "vnncomp2021_test/test_small.vnnlib");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(want.code, 0) << want.err;
  const std::string answer = want.out.substr(0, want.out.find('\n'));
  EXPECT_NE(r.out.find("test_small.onnx,test_small.vnnlib," + answer + ","), std::string::npos) << r.out;
}

}  // namespace
}  // namespace denote
