#include "gp/archive/byte_io.h"

#include <errno.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "gp/util/safe_open.h"

namespace gp::archive {
namespace {

constexpr size_t kRawBuffer = 1 << 16;
constexpr size_t kDecodedBuffer = 1 << 17;
constexpr unsigned char kLz4Magic[4] = {0x04, 0x22, 0x4D, 0x18};

std::string errno_text(int err) { return ::strerror(err); }

}  // namespace

// ---------------------------------------------------------------- input

// A stream over memory (fd -1) holds the bytes themselves in raw_: no read buffer to allocate.
InputStream::InputStream(int fd, bool owns_fd, std::string name)
    : fd_(fd), owns_fd_(owns_fd), name_(std::move(name)), raw_(fd >= 0 ? kRawBuffer : 0) {}

InputStream::~InputStream() {
  if (dctx_) LZ4F_freeDecompressionContext(dctx_);
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<InputStream>> InputStream::open(const std::string& path) {
  if (path == "-") return from_fd(STDIN_FILENO, "<stdin>");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("cannot open '" + path + "': " + errno_text(errno));
  return std::unique_ptr<InputStream>(new InputStream(fd, true, path));
}

std::unique_ptr<InputStream> InputStream::from_fd(int fd, std::string name,
                                                  std::string_view already_read) {
  auto in = std::unique_ptr<InputStream>(new InputStream(fd, false, std::move(name)));
  if (already_read.size() > in->raw_.size()) in->raw_.resize(already_read.size());
  std::memcpy(in->raw_.data(), already_read.data(), already_read.size());
  in->raw_len_ = already_read.size();
  return in;
}

std::unique_ptr<InputStream> InputStream::from_memory(std::string_view data, std::string name) {
  auto in = std::unique_ptr<InputStream>(new InputStream(-1, false, std::move(name)));
  in->raw_.assign(data.begin(), data.end());
  in->raw_len_ = data.size();
  in->raw_eof_ = true;
  return in;
}

Result<size_t> InputStream::fill_raw() {
  if (raw_eof_) return size_t{0};
  if (raw_pos_ > 0) {  // keep the unread tail at the front
    std::memmove(raw_.data(), raw_.data() + raw_pos_, raw_len_ - raw_pos_);
    raw_len_ -= raw_pos_;
    raw_pos_ = 0;
  }
  if (raw_len_ == raw_.size()) return size_t{0};
  for (;;) {
    ssize_t n = ::read(fd_, raw_.data() + raw_len_, raw_.size() - raw_len_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error("cannot read '" + name_ + "': " + errno_text(errno));
    if (n == 0) raw_eof_ = true;
    raw_len_ += static_cast<size_t>(n);
    return static_cast<size_t>(n);
  }
}

Result<size_t> InputStream::read_raw(void* dst, size_t n) {
  char* out = static_cast<char*>(dst);
  size_t done = 0;
  while (done < n) {
    if (raw_pos_ == raw_len_) {
      auto got = fill_raw();
      if (!got) return got.error();
      if (raw_pos_ == raw_len_) break;
    }
    size_t take = std::min(n - done, raw_len_ - raw_pos_);
    std::memcpy(out + done, raw_.data() + raw_pos_, take);
    raw_pos_ += take;
    done += take;
  }
  return done;
}

Result<bool> InputStream::raw_starts_with_lz4() {
  while (raw_len_ - raw_pos_ < 4 && !raw_eof_) {
    auto got = fill_raw();
    if (!got) return got.error();
  }
  if (raw_len_ - raw_pos_ < 4) return false;
  return std::memcmp(raw_.data() + raw_pos_, kLz4Magic, 4) == 0;
}

Result<bool> InputStream::lz4_fill() {
  while (in_lz4_ && decoded_pos_ == decoded_len_) {
    if (raw_pos_ == raw_len_) {
      auto got = fill_raw();
      if (!got) return got.error();
    }
    // At the end of the input src_size is 0: the decoder may still hold decoded bytes of the
    // last complete block (a block is larger than decoded_), and a call without input drains
    // them. Stopping at EOF instead lost the last finished chunks of a killed recorder.
    size_t dst_size = decoded_.size();
    size_t src_size = raw_len_ - raw_pos_;
    const bool eof = src_size == 0;
    size_t hint = LZ4F_decompress(dctx_, decoded_.data(), &dst_size, raw_.data() + raw_pos_,
                                  &src_size, nullptr);
    if (LZ4F_isError(hint))
      return make_error("corrupt LZ4 data in '" + name_ + "': " + LZ4F_getErrorName(hint));
    raw_pos_ += src_size;
    decoded_pos_ = 0;
    decoded_len_ = dst_size;
    if (hint == 0) in_lz4_ = false;  // frame complete
    if (eof && dst_size == 0 && in_lz4_) {
      ended_in_frame_ = true;  // EOF inside a frame: truncated stream
      return false;
    }
  }
  return decoded_pos_ < decoded_len_;
}

Result<size_t> InputStream::read_lz4(void* dst, size_t n) {
  char* out = static_cast<char*>(dst);
  size_t done = 0;
  while (done < n) {
    if (decoded_pos_ < decoded_len_) {
      size_t take = std::min(n - done, decoded_len_ - decoded_pos_);
      std::memcpy(out + done, decoded_.data() + decoded_pos_, take);
      decoded_pos_ += take;
      done += take;
      continue;
    }
    if (!in_lz4_) {  // the frame ended mid-message: the rest can only be plain bytes
      auto got = read_raw(out + done, n - done);
      if (!got) return got.error();
      done += *got;
      break;
    }
    auto filled = lz4_fill();
    if (!filled) return filled.error();
    if (!*filled && in_lz4_) break;  // EOF inside a frame
  }
  position_ += done;
  return done;
}

Result<size_t> InputStream::read(void* dst, size_t n) {
  if (in_lz4_ || decoded_pos_ < decoded_len_) return read_lz4(dst, n);
  auto got = read_raw(dst, n);
  if (got) position_ += *got;
  return got;
}

Status InputStream::at_message_boundary() {
  if (in_lz4_ || decoded_pos_ < decoded_len_) return ok_status();
  auto is_lz4 = raw_starts_with_lz4();
  if (!is_lz4) return is_lz4.error();
  if (!*is_lz4) return ok_status();
  if (!dctx_) {
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx_, LZ4F_VERSION)))
      return make_error("cannot create LZ4 decoder");
  } else {
    LZ4F_resetDecompressionContext(dctx_);
  }
  in_lz4_ = true;
  decoded_pos_ = decoded_len_ = 0;
  if (decoded_.empty()) decoded_.reset(kDecodedBuffer);
  return ok_status();
}

Result<bool> InputStream::at_end() {
  for (;;) {
    auto st = at_message_boundary();
    if (!st) return st.error();
    if (decoded_pos_ < decoded_len_) return false;
    if (!in_lz4_) break;
    // A frame may hold nothing more than its end mark: decode a step to find out.
    auto filled = lz4_fill();
    if (!filled) return filled.error();
    if (*filled) return false;
    if (in_lz4_) return true;  // EOF inside the frame
  }
  if (raw_pos_ < raw_len_) return false;
  auto got = fill_raw();
  if (!got) return got.error();
  return raw_pos_ == raw_len_;
}

// ---------------------------------------------------------------- output

bool output_is_pipe(const std::string& path) {
  struct stat st {};
  return path == "-" && ::fstat(STDOUT_FILENO, &st) == 0 &&
         (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

OutputStream::OutputStream(int fd, bool owns_fd, std::string name, bool compress, std::string* sink)
    : fd_(fd), owns_fd_(owns_fd), name_(std::move(name)), compress_(compress), sink_(sink) {}

OutputStream::~OutputStream() {
  if (!closed_) (void)close();
  if (cctx_) LZ4F_freeCompressionContext(cctx_);
}

Result<std::unique_ptr<OutputStream>> OutputStream::open(const std::string& path, bool compress) {
  if (path == "-") return from_fd(STDOUT_FILENO, "<stdout>", compress);
  // Not O_TRUNC: a file another gp process is writing must survive until the lock says so.
  auto opened = util::open_for_writing(path, O_WRONLY | O_CREAT, 0644);
  if (!opened) return opened.error();
  const int fd = *opened;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // Two writers of one file would interleave or truncate each other's sessions: the second
    // refuses, naming the first. A POSIX record lock tells who holds it (F_GETLK).
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (::fcntl(fd, F_SETLK, &lock) != 0 && (errno == EACCES || errno == EAGAIN)) {
      struct flock holder {};
      holder.l_type = F_WRLCK;
      holder.l_whence = SEEK_SET;
      std::string who = "another process";
      if (::fcntl(fd, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK && holder.l_pid > 0)
        who = "process " + std::to_string(holder.l_pid);
      ::close(fd);
      return make_error("cannot write '" + path + "': " + who + " is writing it");
    }
    if (::ftruncate(fd, 0) != 0) {
      const int e = errno;
      ::close(fd);
      return make_error("cannot create '" + path + "': " + errno_text(e));
    }
  }
  return std::unique_ptr<OutputStream>(new OutputStream(fd, true, path, compress, nullptr));
}

std::unique_ptr<OutputStream> OutputStream::from_fd(int fd, std::string name, bool compress) {
  return std::unique_ptr<OutputStream>(
      new OutputStream(fd, false, std::move(name), compress, nullptr));
}

std::unique_ptr<OutputStream> OutputStream::to_string(std::string* out, bool compress) {
  return std::unique_ptr<OutputStream>(new OutputStream(-1, false, "<memory>", compress, out));
}

Status OutputStream::write_fd(const char* p, size_t n) {
  if (sink_) {
    sink_->append(p, n);
    return ok_status();
  }
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      last_errno_ = errno;
      return make_error("cannot write '" + name_ + "': " + errno_text(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return ok_status();
}

Status OutputStream::begin_frame_if_needed() {
  if (!compress_ || frame_open_) return ok_status();
  if (!cctx_ && LZ4F_isError(LZ4F_createCompressionContext(&cctx_, LZ4F_VERSION)))
    return make_error("cannot create LZ4 encoder");
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof prefs);
  prefs.frameInfo.blockSizeID = LZ4F_max256KB;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;  // detect corruption per block
  const size_t need = std::max<size_t>(LZ4F_HEADER_SIZE_MAX, LZ4F_compressBound(1 << 16, &prefs));
  if (out_.size() < need) out_.reset(need);
  size_t n = LZ4F_compressBegin(cctx_, out_.data(), out_.size(), &prefs);
  if (LZ4F_isError(n)) return make_error(std::string("LZ4 error: ") + LZ4F_getErrorName(n));
  frame_open_ = true;
  return write_fd(out_.data(), n);
}

Status OutputStream::write(const void* src, size_t n) {
  if (!compress_) return write_fd(static_cast<const char*>(src), n);
  auto st = begin_frame_if_needed();
  if (!st) return st;
  const char* p = static_cast<const char*>(src);
  while (n > 0) {
    size_t take = std::min<size_t>(n, 1 << 16);
    size_t bound = LZ4F_compressBound(take, nullptr);
    if (out_.size() < bound) out_.reset(bound);
    size_t c = LZ4F_compressUpdate(cctx_, out_.data(), out_.size(), p, take, nullptr);
    if (LZ4F_isError(c)) return make_error(std::string("LZ4 error: ") + LZ4F_getErrorName(c));
    st = write_fd(out_.data(), c);
    if (!st) return st;
    p += take;
    n -= take;
  }
  return ok_status();
}

Status OutputStream::flush() {
  if (!compress_ || !frame_open_) return ok_status();
  size_t bound = LZ4F_compressBound(0, nullptr);
  if (out_.size() < bound) out_.reset(bound);
  size_t c = LZ4F_flush(cctx_, out_.data(), out_.size(), nullptr);
  if (LZ4F_isError(c)) return make_error(std::string("LZ4 error: ") + LZ4F_getErrorName(c));
  return write_fd(out_.data(), c);
}

Status OutputStream::end_frame() {
  if (!compress_ || !frame_open_) return ok_status();
  size_t bound = LZ4F_compressBound(0, nullptr);
  if (out_.size() < bound) out_.reset(bound);
  size_t c = LZ4F_compressEnd(cctx_, out_.data(), out_.size(), nullptr);
  frame_open_ = false;
  if (LZ4F_isError(c)) return make_error(std::string("LZ4 error: ") + LZ4F_getErrorName(c));
  return write_fd(out_.data(), c);
}

Status OutputStream::close() {
  if (closed_) return ok_status();
  closed_ = true;
  Status st = end_frame();
  if (owns_fd_ && fd_ >= 0) {
    if (::close(fd_) != 0 && st) {
      last_errno_ = errno;
      st = make_error("cannot write '" + name_ + "': " + errno_text(errno));
    }
    fd_ = -1;
  }
  return st;
}

}  // namespace gp::archive
