// The files the executables read and write, handled as a careful Unix tool handles them, and user values
// quoted safely in messages (CPU only: the CPU tests exercise it without a GPU).
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace reduce {

// A value from the user (an option's text, a path, a token of a file) as a message shows it: in single
// quotes, on one line, at most `limit` characters of it and then "...' (N bytes)". Control bytes, bytes
// that are not UTF-8, quotes and backslashes are escaped (\n, \t, \r, \', \\, \xNN).
std::string quote(std::string_view value, std::size_t limit = 80);

// Output that was lost (a full disk, a closed pipe): exit code 1 and its one-line what() (guarded_main).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole text of the file an option names (`option`, as "--offsets", starts every message).
// Refused with reduce::UsageError (exit 2) and a one-line reason: what is not a regular file (a folder,
// a FIFO, a device such as /dev/zero: reading it could block or never end), a file larger than
// `max_bytes`, and a read error ("cannot read 'PATH': Input/output error"). The open never blocks
// (O_NONBLOCK), and what is read is bounded even where the size is not known first (/proc files).
std::string read_text_file(const std::string& path, const std::string& option, std::int64_t max_bytes);

// The same file read as words (runs of bytes between white space: space, \t, \n, \v, \f, \r), each
// handed to take() as soon as it ends, so that a caller refusing a word (by throwing) does so at once,
// not after reading a gigabyte; memory stays bounded by max_word. A word longer than max_word bytes is
// handed over at its (max_word + 1)-th byte, cut to its first max_word, and the rest of it is skipped.
struct Word {
  std::string_view text;  // valid during the call only
  std::int64_t index;     // 0 for the file's first word
  bool cut;               // longer than max_word: text is its beginning
};
void for_each_word(const std::string& path, const std::string& option, std::int64_t max_bytes, std::size_t max_word,
                   const std::function<void(const Word&)>& take);

// The file an option writes, decided before any work so that a path that cannot be written is refused at
// once (UsageError, exit 2), and written by commit() (OutputError, exit 1, when the write fails):
//   a regular file, or a new one   written to a temporary file in the same folder, flushed to disk
//                                  (fsync), then renamed over it: readers see the old or the new text;
//   a symlink                      resolved: its target is handled as below, and the link stays a link;
//   a character device or a FIFO   written in place (/dev/null, /dev/stdout), never replaced;
//   a folder, a block device, a socket, a dangling link: refused with the reason.
// The temporary file (.reduce-write-PID-XXXXXX) never outlives the writer: the destructor removes it when
// commit() did not rename it, and SIGINT, SIGTERM or SIGHUP removes it before the signal's own action
// (by default the end of the process, as if no handler were there; a signal ignored stays ignored).
class FileWriter {
 public:
  FileWriter(const std::string& path, const std::string& option);
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  void commit(const std::string& text);

 private:
  std::string path_;    // as given (messages)
  std::string target_;  // where the text goes: the path, or a symlink's resolved target
  std::string option_;
  std::string temp_;  // the temporary file beside target_; "" when written in place
  int slot_ = -1;     // where the signal handler finds temp_ (files.cpp); -1: none
  int fd_ = -1;       // the temporary file, or the device or FIFO opened in place
};

// The process's standard output, flushed: "" when everything written reached it, else why not
// ("No space left on device"). guarded_main turns a failure into exit 1 and one line.
std::string flush_stdout();

}  // namespace reduce
