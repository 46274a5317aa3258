// include/denote/base/file.h: bounded whole-file reads, gzip through zlib's inflate.
#include "denote/base/file.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace denote {

bool is_gzip_path(std::string_view path) { return path.size() > 3 && path.substr(path.size() - 3) == ".gz"; }

std::string_view without_gz(std::string_view path) { return is_gzip_path(path) ? path.substr(0, path.size() - 3) : path; }

namespace {

Result<std::string> read_plain(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) return error_status("cannot open file '" + path + "'");
  if (!std::filesystem::is_regular_file(st))
    return error_status(ErrorCode::kInvalidInput, "'" + path + "' is not a regular file; expected a file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes)
    return error_status(ErrorCode::kResource,
                        fmt::format("file '{}' has {} bytes; expected at most {} bytes", path, size, max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) return error_status("cannot open file '" + path + "'");
  std::string text;
  text.reserve(ec ? 0 : static_cast<size_t>(size));
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes)
      return error_status(ErrorCode::kResource, fmt::format("file '{}' grew past {} bytes while read", path, max_bytes));
  }
  if (in.bad()) return error_status("error reading file '" + path + "'");
  return text;
}

// The last member's ISIZE field: its inflated length mod 2^32, a hint only, never more than deflate's
// largest ratio (1032:1) allows for z's size (a small file that claims gigabytes gets no more).
uint64_t gzip_size_hint(const std::string& z) {
  if (z.size() < 18) return 0;
  const auto* b = reinterpret_cast<const unsigned char*>(z.data() + z.size() - 4);
  const uint64_t isize = uint64_t{b[0]} | uint64_t{b[1]} << 8 | uint64_t{b[2]} << 16 | uint64_t{b[3]} << 24;
  return std::min<uint64_t>(isize, uint64_t{z.size()} * 1032);
}

// Inflates every gzip member of `z` (concatenated members are one stream, as gzip -d reads them).
Result<std::string> inflate_gzip(const std::string& path, const std::string& z, uint64_t max_bytes) {
  z_stream s{};
  if (inflateInit2(&s, 15 + 32) != Z_OK) return error_status(ErrorCode::kResource, "'" + path + "': zlib cannot start");
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(z.data()));
  s.avail_in = static_cast<uInt>(z.size());
  // Inflated in place into `out`, sized first by the gzip trailer's length (mod 2^32, capped at the bound)
  // and grown by halves beyond it: copying 64 KiB blocks into a doubling string was most of a 164 MB load.
  std::string out;
  size_t used = 0;
  out.resize(std::max<size_t>(1 << 16, std::min<uint64_t>(gzip_size_hint(z), max_bytes + 1)));
  int rc = Z_OK;
  Status err;
  while (err.ok()) {
    if (used == out.size()) out.resize(out.size() + out.size() / 2);
    const size_t room = std::min<size_t>(out.size() - used, UINT32_MAX);
    s.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    s.avail_out = static_cast<uInt>(room);
    rc = inflate(&s, Z_NO_FLUSH);
    used += room - s.avail_out;
    if (used > max_bytes)
      err = error_status(ErrorCode::kResource,
                         fmt::format("'{}' inflates past {} bytes; expected at most {} bytes", path, max_bytes, max_bytes));
    else if (rc == Z_STREAM_END && s.avail_in > 0)
      rc = inflateReset(&s);  // the next member
    else if (rc == Z_STREAM_END)
      break;
    else if (rc != Z_OK || (s.avail_in == 0 && s.avail_out != 0))
      err = error_status(ErrorCode::kInvalidInput,
                         fmt::format("'{}': {} gzip data at byte {} of {}; expected a complete gzip file", path,
                                     rc == Z_OK || rc == Z_BUF_ERROR ? "truncated" : "corrupt", s.total_in, z.size()));
  }
  inflateEnd(&s);
  if (!err.ok()) return err;
  out.resize(used);
  return out;
}

}  // namespace

Result<std::string> read_file_bounded(const std::string& path, uint64_t max_bytes) {
  if (!is_gzip_path(path)) return read_plain(path, max_bytes);
  // The compressed file is bounded too: no larger than what it inflates to plus deflate's worst-case
  // overhead (stored blocks: 5 bytes per 64 KiB) and the gzip headers.
  DENOTE_ASSIGN_OR_RETURN(std::string z, read_plain(path, max_bytes + max_bytes / 8192 + 4096));
  if (z.size() > UINT32_MAX) return error_status(ErrorCode::kResource, "'" + path + "': compressed file over 4 GiB");
  return inflate_gzip(path, z, max_bytes);
}

}  // namespace denote
