#pragma once
// Byte streams under the archive: plain files, pipes or memory, with an optional LZ4 frame
// layer. LZ4 is detected by its frame magic wherever a capnp message could start, so plain and
// compressed sessions may follow each other in one stream (`cat a.gpa b.gpa.lz4`).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gp/util/result.h"

struct LZ4F_dctx_s;
struct LZ4F_cctx_s;

namespace gp::archive {

// A work buffer the LZ4 layer overwrites before reading: sizing it does not zero it (a stream
// over a few bytes would otherwise clear and fault in hundreds of KiB), and the content is not
// kept when it is sized again.
class ScratchBuffer {
 public:
  char* data() { return bytes_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void reset(size_t n) {
    bytes_ = std::make_unique_for_overwrite<char[]>(n);
    size_ = n;
  }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t size_ = 0;
};

class InputStream {
 public:
  // Opens a path, or standard input for "-". The error text names the path.
  static Result<std::unique_ptr<InputStream>> open(const std::string& path);
  // Reads from an fd the caller keeps open; `already_read` is what the caller took from it
  // first (to sniff the format), read again before the fd's next bytes.
  static std::unique_ptr<InputStream> from_fd(int fd, std::string name,
                                              std::string_view already_read = {});
  // Reads from a copy of `data` (tests, fuzzers).
  static std::unique_ptr<InputStream> from_memory(std::string_view data,
                                                  std::string name = "<memory>");
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  // Reads up to n decoded bytes; returns fewer only at the end of the stream.
  Result<size_t> read(void* dst, size_t n);
  // Call where a message may start: begins LZ4 decoding if an LZ4 frame starts here.
  Status at_message_boundary();
  // True when no more bytes can be read (checked at a message boundary).
  Result<bool> at_end();
  // Decoded bytes consumed so far (for messages such as "corrupt at byte N").
  uint64_t position() const { return position_; }
  // True once the input ended inside an LZ4 frame (its end mark never came): everything after
  // the last complete message of that frame is lost, and a reader must say so.
  bool ended_inside_frame() const { return ended_in_frame_; }
  const std::string& name() const { return name_; }

 private:
  InputStream(int fd, bool owns_fd, std::string name);
  Result<size_t> fill_raw();  // refills raw_ from the fd; 0 at EOF
  Result<size_t> read_raw(void* dst, size_t n);
  Result<size_t> read_lz4(void* dst, size_t n);
  Result<bool> lz4_fill();  // decodes until bytes are ready; false at frame end or EOF
  Result<bool> raw_starts_with_lz4();

  int fd_;
  bool owns_fd_;
  std::string name_;
  std::vector<char> raw_;
  size_t raw_pos_ = 0;
  size_t raw_len_ = 0;
  bool raw_eof_ = false;
  bool in_lz4_ = false;
  bool ended_in_frame_ = false;
  LZ4F_dctx_s* dctx_ = nullptr;
  ScratchBuffer decoded_;
  size_t decoded_pos_ = 0;
  size_t decoded_len_ = 0;
  uint64_t position_ = 0;
};

// Whether an archive for `path` goes down a pipe ("-" with standard output a FIFO or socket):
// gp-import and gp-symbolize write those without LZ4 by default, as the next tool reads them at
// once (compressing and decompressing cost more than the bytes saved in a pipe); readers take
// both forms.
bool output_is_pipe(const std::string& path);

class OutputStream {
 public:
  // Opens (creates/truncates) a path, or standard output for "-". A link or file planted by
  // another user in a sticky world-writable directory is refused (gp/util/safe_open.h), and a
  // regular file is locked while open: a second writer of the same file is refused with the
  // pid of the first.
  static Result<std::unique_ptr<OutputStream>> open(const std::string& path, bool compress);
  // Writes to an fd the caller keeps open.
  static std::unique_ptr<OutputStream> from_fd(int fd, std::string name, bool compress);
  // Appends to a string (tests).
  static std::unique_ptr<OutputStream> to_string(std::string* out, bool compress);
  ~OutputStream();
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;

  Status write(const void* src, size_t n);
  // Pushes everything written so far to the fd (compressing a partial LZ4 block if needed), so
  // a reader of a killed producer still gets it.
  Status flush();
  // Ends the current LZ4 frame (no-op when plain); the next write starts a new frame.
  Status end_frame();
  // end_frame + close the fd if owned. Reports deferred write errors (ENOSPC on close).
  Status close();
  const std::string& name() const { return name_; }
  // errno of the last failed write (EPIPE lets tools exit quietly), 0 if none.
  int last_errno() const { return last_errno_; }

 private:
  OutputStream(int fd, bool owns_fd, std::string name, bool compress, std::string* sink);
  Status write_fd(const char* p, size_t n);
  Status begin_frame_if_needed();

  int fd_;
  bool owns_fd_;
  std::string name_;
  bool compress_;
  std::string* sink_;
  LZ4F_cctx_s* cctx_ = nullptr;
  bool frame_open_ = false;
  ScratchBuffer out_;
  int last_errno_ = 0;
  bool closed_ = false;
};

}  // namespace gp::archive
