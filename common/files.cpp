#include "files.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <mutex>

#include "options.hpp"  // UsageError

namespace reduce {
namespace {

// The length of the valid UTF-8 sequence at v[i] (2 to 4), or 0 (not UTF-8: overlong, a surrogate,
// beyond U+10FFFF, cut short).
std::size_t utf8_length(std::string_view v, std::size_t i) {
  const auto byte = [&](std::size_t k) { return i + k < v.size() ? static_cast<unsigned char>(v[i + k]) : 0u; };
  const unsigned c = byte(0), c1 = byte(1);
  std::size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4)
    len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  if (len == 0 || c1 < lo || c1 > hi) return 0;
  for (std::size_t k = 2; k < len; ++k)
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  return len;
}

std::string hex_byte(unsigned char c) {
  char text[8];
  std::snprintf(text, sizeof text, "\\x%02X", c);
  return text;
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string size_text(std::int64_t bytes) {
  if (bytes >= (1 << 30) && bytes % (1 << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Closes a descriptor when the scope ends (the reader's error paths throw).
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// Writes all of text to fd; false (errno set) on an error.
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t k = write(fd, text.data() + done, text.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      if (k == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(k);
  }
  return true;
}

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The temporary files an interrupt must not leave behind: SIGINT, SIGTERM or SIGHUP arriving before
// commit() renames a file or the destructor removes it ends the process without running either. A
// signal handler may call only async-signal-safe functions, so the paths live in fixed buffers, each
// published by a lock-free flag, and the handler does nothing but unlink() them and re-raise.
struct PendingTemp {
  std::atomic<bool> claimed{false};  // a FileWriter owns the slot
  std::atomic<bool> armed{false};    // the handler removes `path`
  char path[PATH_MAX];
};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler reads these flags");
PendingTemp pending[16];  // writers open at once (one per --write option); more go unprotected
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction previous[NSIG];

extern "C" void remove_temps_and_reraise(int sig) {
  const int saved = errno;
  for (PendingTemp& t : pending)
    if (t.armed.load()) unlink(t.path);
  // The action before ours (by default: end the process, with the signal as its status, so the shell
  // and the caller see an interrupt, not an exit code). It runs when this handler returns.
  sigaction(sig, &previous[sig], nullptr);
  raise(sig);
  errno = saved;
}

// Installs the handler where the signal still has another action (each writer checks: a program may set
// its own actions between writers). The action it replaces is kept for the handler to pass the signal on.
void install_cleanup_handler() {
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  struct sigaction ours {};
  ours.sa_handler = remove_temps_and_reraise;
  sigemptyset(&ours.sa_mask);
  for (int sig : kCleanupSignals) sigaddset(&ours.sa_mask, sig);  // one handler at a time
  ours.sa_flags = SA_RESTART;
  for (int sig : kCleanupSignals) {
    struct sigaction now {};
    if (sigaction(sig, nullptr, &now) != 0 || now.sa_handler == remove_temps_and_reraise) continue;
    // An ignored signal (nohup, a background job) stays ignored: it ends nothing, so nothing is left.
    if (!(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN) continue;
    previous[sig] = now;
    sigaction(sig, &ours, nullptr);
  }
}

// The handler no longer removes the slot's file (renamed or removed already); the slot is free again.
void release_temp(int& slot) {
  if (slot < 0) return;
  pending[slot].armed.store(false);
  pending[slot].claimed.store(false);
  slot = -1;
}

// Creates the temporary file beside target (mkstemp) with its path armed for the handler, before the
// file exists: no moment holds a file the handler would not remove. The name carries the process id,
// so a name the handler sees while mkstemp still tries candidates is never another process's file.
// Returns the descriptor (or -1, errno set) and the path; slot is -1 when every slot is taken.
int make_temp(const std::string& target, std::string& path, int& slot) {
  path = folder_of(target) + "/.reduce-write-" + std::to_string(getpid()) + "-XXXXXX";
  slot = -1;
  install_cleanup_handler();
  for (int i = 0; i < static_cast<int>(std::size(pending)) && path.size() < PATH_MAX; ++i) {
    bool free = false;
    if (!pending[i].claimed.compare_exchange_strong(free, true)) continue;
    slot = i;
    std::memcpy(pending[i].path, path.c_str(), path.size() + 1);
    pending[i].armed.store(true);
    break;
  }
  char* name = slot >= 0 ? pending[slot].path : path.data();
  const int fd = mkstemp(name);
  const int error = errno;
  path = name;
  if (fd < 0) release_temp(slot);
  errno = error;
  return fd;
}

}  // namespace

std::string quote(std::string_view v, std::size_t limit) {
  std::string out = "'";
  std::size_t shown = 0, i = 0;
  while (i < v.size()) {
    const auto c = static_cast<unsigned char>(v[i]);
    std::string piece;
    std::size_t used = 1, width = 0;
    if (c == '\n')
      piece = "\\n";
    else if (c == '\t')
      piece = "\\t";
    else if (c == '\r')
      piece = "\\r";
    else if (c == '\\' || c == '\'')
      piece = std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c == 0x7F)
      piece = hex_byte(c);
    else if (c < 0x80)
      piece = std::string(1, static_cast<char>(c));
    else if (const std::size_t len = utf8_length(v, i); len == 0)
      piece = hex_byte(c);
    else if (c == 0xC2 && static_cast<unsigned char>(v[i + 1]) < 0xA0)  // U+0080..U+009F: C1 controls
      piece = hex_byte(c) + hex_byte(static_cast<unsigned char>(v[i + 1])), used = 2;
    else
      piece = std::string(v.substr(i, len)), used = len, width = 1;  // one character on the screen
    if (width == 0) width = piece.size();
    if (shown + width > limit) break;
    out += piece;
    shown += width;
    i += used;
  }
  out += "'";
  if (i < v.size()) out += "... (" + std::to_string(v.size()) + " bytes)";
  return out;
}

namespace {

// The file an option names, handed to take() in pieces as it is read (read_text_file's checks and bound).
void read_pieces(const std::string& path, const std::string& option, std::int64_t max_bytes,
                 const std::function<void(std::string_view)>& take) {
  const std::string name = option + ": " + quote(path);
  auto cannot = [&](int error) {
    return UsageError(option + ": cannot read " + quote(path) + ": " + std::strerror(error));
  };
  // O_NONBLOCK: opening a FIFO that no one writes returns at once (fstat below then refuses it).
  const Fd in{open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
  struct stat st {};
  if (in.fd < 0) {
    const int error = errno;
    if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      throw UsageError(name + " is " + kind_of(st.st_mode) + ", not a file");
    throw cannot(error);
  }
  if (fstat(in.fd, &st) != 0) throw cannot(errno);
  // Only a regular file: a FIFO or a terminal may block, a device such as /dev/zero never ends.
  if (!S_ISREG(st.st_mode)) throw UsageError(name + " is " + kind_of(st.st_mode) + ", not a file");
  const std::string too_large = name + " is larger than " + size_text(max_bytes) + ", the most " + option + " reads";
  if (st.st_size > max_bytes) throw UsageError(too_large);
  // The size fstat gives is a hint only (a /proc file says 0): the reads stop one byte past the limit.
  std::int64_t total = 0;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t k = read(in.fd, buffer, sizeof buffer);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw cannot(errno);
    if (k == 0) break;
    if ((total += k) > max_bytes) throw UsageError(too_large);
    take(std::string_view(buffer, static_cast<std::size_t>(k)));
  }
}

}  // namespace

std::string read_text_file(const std::string& path, const std::string& option, std::int64_t max_bytes) {
  std::string text;
  read_pieces(path, option, max_bytes, [&](std::string_view piece) { text.append(piece); });
  return text;
}

void for_each_word(const std::string& path, const std::string& option, std::int64_t max_bytes, std::size_t max_word,
                   const std::function<void(const Word&)>& take) {
  std::string word;
  std::int64_t index = 0;
  bool skipping = false;  // the rest of a word already handed over as cut
  auto end_word = [&] {
    if (!word.empty() && !skipping) take(Word{word, index, false});
    index += !word.empty();
    word.clear();
    skipping = false;
  };
  read_pieces(path, option, max_bytes, [&](std::string_view piece) {
    for (const char c : piece) {
      if (c == ' ' || (c >= '\t' && c <= '\r'))
        end_word();  // " \t\n\v\f\r", as isspace in the C locale
      else if (word.size() < max_word)
        word += c;
      else if (!skipping)
        skipping = true, take(Word{word, index, true});
    }
  });
  end_word();
}

FileWriter::FileWriter(const std::string& path, const std::string& option)
    : path_(path), target_(path), option_(option) {
  const std::string name = option + ": " + quote(path);
  auto cannot = [&](int error) {
    return UsageError(option + ": cannot write " + quote(path) + ": " + std::strerror(error));
  };
  if (path.empty()) throw UsageError(option + ": needs a file name");
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    // The link stays: its target is written (replaced by a rename beside it when it is a regular file).
    if (char* real = realpath(path.c_str(), nullptr)) {
      target_ = real;
      std::free(real);
    } else if (stat(path.c_str(), &st) != 0) {
      throw UsageError(name + " is a symlink to nothing (" + std::strerror(errno) + ")");
    }  // else a link realpath cannot follow (/dev/stdout to a pipe): the path itself, opened in place below
  }
  mode_t mode = 0;
  const bool exists = stat(target_.c_str(), &st) == 0;
  if (exists) {
    if (S_ISDIR(st.st_mode)) throw UsageError(name + " is a folder, not a file");
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      // In place, never replaced. O_NONBLOCK: a FIFO that no one reads is refused (ENXIO), not waited on.
      fd_ = open(target_.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      if (fd_ < 0 && errno == ENXIO && S_ISFIFO(st.st_mode))
        throw UsageError(name + " is a FIFO that no process reads");
      if (fd_ < 0) throw cannot(errno);
      fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) & ~O_NONBLOCK);  // then the reader sets the pace
      return;
    }
    if (!S_ISREG(st.st_mode))
      throw UsageError(name + " is " + kind_of(st.st_mode) + "; write a regular file, a character device or a FIFO");
    mode = st.st_mode & 07777;
  } else if (errno != ENOENT) {
    throw cannot(errno);
  } else {
    mode = umask(0);  // a new file gets the permissions open() would give it
    umask(mode);
    mode = 0666 & ~mode;
  }
  std::string temp;
  fd_ = make_temp(target_, temp, slot_);
  if (fd_ < 0) throw cannot(errno);
  temp_ = temp;
  // The replacement keeps the file's owner where allowed (root writing another's file) and its mode.
  if (exists && fchown(fd_, st.st_uid, st.st_gid) != 0) errno = 0;
  fchmod(fd_, mode);
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) close(fd_);
  if (!temp_.empty()) unlink(temp_.c_str());  // then released: an interrupt in between finds it gone
  release_temp(slot_);
}

void FileWriter::commit(const std::string& text) {
  auto fail = [&](int error) {
    return OutputError(option_ + ": cannot write " + quote(path_) + ": " + std::strerror(error));
  };
  if (!write_all(fd_, text)) throw fail(errno);
  if (!temp_.empty() && fsync(fd_) != 0) throw fail(errno);
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) throw fail(errno);
  if (temp_.empty()) return;
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) throw fail(errno);
  temp_.clear();
  release_temp(slot_);
  // The rename reaches the disk with the folder's own fsync (best effort: some file systems refuse it).
  const Fd folder{open(folder_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (folder.fd >= 0) fsync(folder.fd);
}

std::string flush_stdout() {
  std::cout.flush();
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (!failed) return "";
  int error = errno;
  // A write that failed earlier (at a flush mid-run) left no errno: a write of nothing still fails on
  // a full device or a closed descriptor, and a pipe whose reader has gone shows POLLERR.
  if (error == 0 && write(STDOUT_FILENO, "", 0) < 0) error = errno;
  pollfd out{STDOUT_FILENO, POLLOUT, 0};
  if (error == 0 && poll(&out, 1, 0) == 1 && (out.revents & POLLERR)) error = EPIPE;
  return error ? std::strerror(error) : "a write failed";
}

}  // namespace reduce
