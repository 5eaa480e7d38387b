#pragma once
// Python frame names as gProfiler's PyPerf gives them (Granulate's bcc, examples/cpp/pyperf,
// PyPerfProfiler::getSymbolName): "module.Class.function", where the module is derived from the
// code object's file name and the class is the one class that owns the method. gp-fold adds
// " (file:first line)" and gProfiler's package label (package_versions.h) to such a name.

#include <string>
#include <string_view>

namespace gp::runtime::python {

// The module PyPerf derives from a code object's file name:
// 1. up to the last "/lib[32|64]/python2|3[.N][/site-packages|/dist-packages]" is dropped (an
//    interpreter's own module or an installed package: "/usr/lib/python3.11/json/decoder.py" is
//    "/json/decoder.py" then);
// 2. then up to and including the first ".zip/" (a zip import), else one leading "/";
// 3. then a ".py", ".pyc" or ".pyo" ending;
// and every "/" becomes ".". A script outside those directories keeps its whole path:
// "/app/lister.py" is "app.lister".
std::string pyperf_module(std::string_view file);

// PyPerf's "Class.function" from a qualified name (co_qualname; a bare co_name where the
// version has none): PyPerf names the class of the first argument (self's type or cls) by its
// __name__, one part; a function nested in another ("outer.<locals>.inner") has none. So the
// last two parts of what follows the last "<locals>.": "A.B.method" is "B.method".
std::string pyperf_qualified(std::string_view qualname);

// "module.Class.function" of a code object; the qualified name alone when there is no file.
std::string pyperf_frame_name(std::string_view file, std::string_view qualname);

}  // namespace gp::runtime::python
