// .npy reading and writing: round trips in float64 and float32, files written by NumPy itself
// (tests/data/npy/, made by gen_npy.py), and clear errors for what the reader does not support.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>

#include "denote/io/json.h"
#include "denote/io/npy.h"

namespace denote {
namespace {

std::string data_path(const std::string& name) { return std::string(DENOTE_SOURCE_DIR) + "/tests/data/npy/" + name; }

TEST(Npy, RoundTripF64) {
  Tensor<double> t({2, 3}, {-0.5, 1.0 / 3, 1e-300, 5e-324, -0.0, 1e300});
  auto back = parse_npy(format_npy(t, NpyDtype::F64));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->dtype, NpyDtype::F64);
  EXPECT_EQ(back->tensor, t);
  EXPECT_TRUE(std::signbit(back->tensor.data[4]));
}

TEST(Npy, RoundTripF32RoundsOnce) {
  Tensor<double> t({4}, {0.1, -2.25, 1e-50, 3.0});
  auto back = parse_npy(format_npy(t, NpyDtype::F32));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->dtype, NpyDtype::F32);
  EXPECT_EQ(back->tensor.shape, (Shape{4}));
  // Each value is rounded to binary32 once, then widened exactly.
  EXPECT_EQ(back->tensor.data[0], 0.100000001490116119384765625);  // float(0.1)
  EXPECT_EQ(back->tensor.data[1], -2.25);
  EXPECT_EQ(back->tensor.data[2], 0.0);  // underflows in binary32
  EXPECT_EQ(back->tensor.data[3], 3.0);
}

TEST(Npy, RoundTripShapesAndNonFinite) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const Tensor<double>& t : {Tensor<double>({}, {7.0}), Tensor<double>({0}, {}), Tensor<double>({3, 0, 2}, {}),
                                  Tensor<double>({1, 1, 1, 2}, {inf, -inf}), Tensor<double>({5}, {1, 2, 3, 4, 5})}) {
    for (NpyDtype dtype : {NpyDtype::F64, NpyDtype::F32}) {
      const std::string bytes = format_npy(t, dtype);
      // Data starts on a 64-byte boundary and the header ends with a newline.
      const size_t data = bytes.size() - t.data.size() * (dtype == NpyDtype::F64 ? 8 : 4);
      EXPECT_EQ(data % 64, 0u);
      EXPECT_EQ(bytes[data - 1], '\n');
      auto back = parse_npy(bytes);
      ASSERT_TRUE(back.ok()) << back.message();
      EXPECT_EQ(back->tensor, t) << to_string(t.shape);
    }
  }
  auto nan = parse_npy(format_npy(Tensor<double>({1}, {std::nan("")})));
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(std::isnan(nan->tensor.data[0]));
}

TEST(Npy, FilesRoundTrip) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "denote_npy_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.npy").string();
  Tensor<double> t({2, 2}, {1.5, -2, 0.25, 8});
  ASSERT_TRUE(write_npy_file(path, t, NpyDtype::F32).ok());
  auto back = read_npy_file(path);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->dtype, NpyDtype::F32);
  EXPECT_EQ(back->tensor, t);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(read_npy_file(path).message(), "cannot open file '" + path + "'");
  EXPECT_FALSE(write_npy_file("/nonexistent-dir/x.npy", t).ok());
}

// ---- files written by NumPy 1.24 (np.save / np.lib.format.write_array)

TEST(Npy, ReadsNumpyFiles) {
  auto a = read_npy_file(data_path("f64_2x3.npy"));
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->dtype, NpyDtype::F64);
  EXPECT_EQ(a->tensor, (Tensor<double>({2, 3}, {-0.5, -0.25, 0.0, 0.25, 0.5, 0.75})));
  auto v2 = read_npy_file(data_path("f64_2x3_v2.npy"));  // format version 2.0 (4-byte header length)
  ASSERT_TRUE(v2.ok()) << v2.message();
  EXPECT_EQ(v2->tensor, a->tensor);
  auto f = read_npy_file(data_path("f32_3.npy"));
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->dtype, NpyDtype::F32);
  EXPECT_EQ(f->tensor, (Tensor<double>({3}, {1.5, -2.25, 0.100000001490116119384765625})));
  auto s = read_npy_file(data_path("f64_scalar.npy"));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(s->tensor, (Tensor<double>({}, {3.25})));
  auto e = read_npy_file(data_path("f64_0x4.npy"));
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(e->tensor, (Tensor<double>({0, 4}, {})));
  auto r3 = read_npy_file(data_path("f64_2x1x2.npy"));
  ASSERT_TRUE(r3.ok()) << r3.message();
  EXPECT_EQ(r3->tensor, (Tensor<double>({2, 1, 2}, {0, 1, 2, 3})));
  auto nf = read_npy_file(data_path("f64_nonfinite.npy"));
  ASSERT_TRUE(nf.ok()) << nf.message();
  ASSERT_EQ(nf->tensor.data.size(), 4u);
  EXPECT_TRUE(std::isnan(nf->tensor.data[0]));
  EXPECT_EQ(nf->tensor.data[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(nf->tensor.data[2], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::signbit(nf->tensor.data[3]));
}

// Our writer produces the same bytes as NumPy for the same array.
TEST(Npy, WriterMatchesNumpyBytes) {
  auto numpy = read_text_file(data_path("f64_2x3.npy"));
  ASSERT_TRUE(numpy.ok());
  EXPECT_EQ(format_npy(Tensor<double>({2, 3}, {-0.5, -0.25, 0.0, 0.25, 0.5, 0.75})), *numpy);
  auto numpy32 = read_text_file(data_path("f32_3.npy"));
  ASSERT_TRUE(numpy32.ok());
  EXPECT_EQ(format_npy(Tensor<double>({3}, {1.5, -2.25, 0.1}), NpyDtype::F32), *numpy32);
}

TEST(Npy, RejectsWhatItDoesNotSupport) {
  // Every NumPy file here has a 118-byte header after the 10-byte preamble: data starts at 128.
  EXPECT_EQ(read_npy_file(data_path("f64_big_endian.npy")).message(),
            data_path("f64_big_endian.npy") +
                ": .npy: at byte 10: unsupported dtype '>f8' (expected '<f8' or '<f4', little-endian float, or '|u1')");
  EXPECT_EQ(read_npy_file(data_path("f64_fortran.npy")).message(),
            data_path("f64_fortran.npy") + ": .npy: at byte 10: Fortran-order arrays are not supported (expected C order)");
  EXPECT_EQ(read_npy_file(data_path("i64_2x3.npy")).message(),
            data_path("i64_2x3.npy") +
                ": .npy: at byte 10: unsupported dtype '<i8' (expected '<f8' or '<f4', little-endian float, or '|u1')");
  EXPECT_EQ(read_npy_file(data_path("f64_truncated.npy")).message(),
            data_path("f64_truncated.npy") + ": .npy: at byte 128: data holds 45 bytes, shape [2, 3] needs 48");
}

TEST(Npy, RejectsBrokenHeaders) {
  const std::string good = format_npy(Tensor<double>({2}, {1, 2}));
  EXPECT_EQ(parse_npy("").message(), ".npy: at byte 0: not a .npy file (missing \\x93NUMPY magic)");
  EXPECT_EQ(parse_npy("PK\x03\x04 this is a zip").message(), ".npy: at byte 0: not a .npy file (missing \\x93NUMPY magic)");
  std::string v9 = good;
  v9[6] = 9;
  EXPECT_EQ(parse_npy(v9).message(), ".npy: at byte 6: unsupported format version 9");
  EXPECT_EQ(parse_npy(good.substr(0, 40)).message(), ".npy: at byte 10: header runs past the end of the file");
  std::string v2 = good.substr(0, 11);
  v2[6] = 2;
  EXPECT_EQ(parse_npy(v2).message(), ".npy: at byte 8: truncated header length");
  EXPECT_EQ(parse_npy(good + "xx").message(), ".npy: at byte 128: 2 trailing bytes after the data");
  auto with_header = [&](const std::string& dict) {
    std::string h = dict + "\n";
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(h.size() & 0xff);
    out += static_cast<char>(h.size() >> 8);
    return parse_npy(out + h);
  };
  EXPECT_EQ(with_header("{'fortran_order': False, 'shape': (0,), }").message(), ".npy: at byte 10: header has no 'descr' entry");
  EXPECT_EQ(with_header("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (0,), }").message(),
            ".npy: at byte 10: fortran_order is Maybe; expected True or False");
  EXPECT_EQ(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': 3, }").message(),
            ".npy: at byte 10: shape must be a tuple, got 3");
  EXPECT_EQ(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, x), }").message(),
            ".npy: at byte 10: bad dimension in shape (2, x)");
  EXPECT_EQ(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }").message(),
            ".npy: at byte 10: dimension too large in shape (99999999999999999999,)");
  EXPECT_EQ(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }").message(),
            ".npy: at byte 10: element count of shape [4294967296, 4294967296] overflows");
  // A huge (valid) shape with no data is a size error, not an allocation.
  const std::string huge = "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }";
  EXPECT_EQ(with_header(huge).message(), ".npy: at byte " + std::to_string(10 + huge.size() + 1) +
                                             ": data holds 0 bytes, shape [1099511627776] needs 8796093022208");
  auto empty = with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }");
  ASSERT_TRUE(empty.ok()) << empty.message();
  EXPECT_EQ(empty->tensor.shape, (Shape{0, 3}));
}

}  // namespace
}  // namespace denote
