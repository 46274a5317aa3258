// Reading a whole file with a size bound, gzip-compressed or not: what every loader (models, tensors,
// VNN-LIB properties) reads through. A path ending in ".gz" is decompressed (zlib; VNN-COMP publishes
// its benchmarks as .onnx.gz / .vnnlib.gz), and the bound applies to the decompressed bytes, so a small
// compressed file that inflates past it is refused, not read to the end.
//
//   auto text = read_file_bounded("prop.vnnlib.gz", 64 << 20);   // the decompressed text, or an error
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "denote/base/status.h"

namespace denote {

// The file's bytes (decompressed for ".gz"). Errors name the path: no such file, not a regular file
// (a directory, a pipe, /dev/zero), more than max_bytes (the file's size, or what it inflates to, or
// a file that grows while read: kResource), a corrupt or truncated gzip stream (the byte offset of the
// compressed file where it failed), a read error.
Result<std::string> read_file_bounded(const std::string& path, uint64_t max_bytes);

// Whether the path names a gzip file (ends in ".gz"), and the path without that suffix (for the
// format's extension: "net.onnx.gz" -> "net.onnx").
bool is_gzip_path(std::string_view path);
std::string_view without_gz(std::string_view path);

}  // namespace denote
