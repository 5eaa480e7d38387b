#pragma once
// gProfiler's package suffix for Python frames (reference/gprofiler.md §2.5): a frame whose file
// belongs to an installed distribution shows "(file.py:line [name==version])"; a file of the
// standard library shows "[standard-library==<full Python version>]".
//
// As gProfiler decides it: a file is in a package when its path has a "/site-packages/" (else
// "/dist-packages/") directory and a distribution installed there lists the file in its
// *.dist-info or *.egg-info RECORD (an *.egg-info's installed-files.txt otherwise). The name is
// the metadata's Name (METADATA, else PKG-INFO) and the version its Version. A standard-library
// file is under ".../pythonX.Y/" and not under site-/dist-packages; the version is the one
// PY_VERSION string in the interpreter's binary. Files are read through the process's root
// (/proc/PID/root), so a container's own packages are found. Each packages directory is read
// once per mount namespace and run (the index is shared by every process and thread).

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gp/runtime/adapter.h"

namespace gp::runtime::python {

// ".../site-packages/" (with its slash) of an absolute path: the last "/site-packages/", else
// the last "/dist-packages/"; nullopt when the path has neither or is relative.
std::optional<std::string> packages_dir(std::string_view file);

// True for a file under "/pythonX.Y/" that is not also under site-packages or dist-packages.
bool is_standard_library(std::string_view file);

// Every file a distribution in `dir` lists, as an absolute path in the process's view (dir +
// the RECORD entry), mapped to "name==version". `root` is prefixed to read (e.g.
// "/proc/PID/root", or "" for this process's view).
std::map<std::string, std::string> read_packages_dir(const std::string& root,
                                                     const std::string& dir);

// The one "X.Y.Z" PY_VERSION string (NUL-terminated, after a non-digit) in a binary's bytes;
// nullopt when there is none or more than one, as gProfiler decides.
std::optional<std::string> python_version_in_binary(std::string_view bytes);

// gProfiler's frame pattern takes a label only on an absolute ".py" file without ")" (and only
// in a frame with a line).
bool takes_package_label(std::string_view file);

using FileIndex = std::map<std::string, std::string>;

// The labels of one process's Python files, each file looked up once (the packages directories
// and the interpreter's version are shared by every process of a mount namespace). Not
// thread-safe; the caches behind it are.
class PackageLabels {
 public:
  // `interpreter`: the interpreter's binary (libpython when mapped, else the executable) as
  // this process can open it ("/proc/PID/exe", "/proc/PID/root/usr/lib/libpython3.11.so.1.0"),
  // read for the standard library's version when a file of it is first labelled.
  PackageLabels(pid_t pid, std::string interpreter, const std::string& proc_root = "/proc");
  ~PackageLabels();
  PackageLabels(const PackageLabels&) = delete;
  PackageLabels& operator=(const PackageLabels&) = delete;

  // "name==version", "standard-library==X.Y.Z", or "" (a file of neither, one that cannot be
  // read, or one gProfiler's pattern does not take).
  const std::string& of(const std::string& file);

 private:
  std::string root_, ns_, interpreter_;
  std::map<std::string, std::string> labels_;                     // file → label
  std::map<std::string, std::shared_ptr<const FileIndex>> dirs_;  // packages directory → index
  std::optional<std::optional<std::string>> python_version_;      // read once, when needed
};

// Fills Frame::package of every Python frame of `profile` whose file is a ".py" file of a
// package or of the standard library (needs the process: /proc/PID/root, its maps and exe).
// Frames of files that are neither, or that cannot be read, are left as they are.
void add_package_versions(const Target& target, Profile& profile,
                          const std::string& proc_root = "/proc");

}  // namespace gp::runtime::python
