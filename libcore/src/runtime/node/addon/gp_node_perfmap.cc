// gp_node_perfmap: a Node addon that makes a running Node write /tmp/perf-<pid>.map.
//
// gp-runtime's attach-maps mode loads it into a running Node through the inspector
// (process.dlopen) and calls enable(); V8 then reports every piece of generated code to the
// handler below, starting with the code that already exists (kJitCodeEventEnumExisting), and the
// handler writes perf's map format ("<start hex> <size hex> <name>"), the same lines
// `node --perf-basic-prof` writes. gp-record copies the file at the end of its session and
// gp-symbolize names the JIT frames from it. disable() unregisters the handler and closes the
// file, which stays for gp-record.
//
// V8's --perf-basic-prof flag cannot be flipped at run time (v8.setFlagsFromString writes no
// map), hence an addon; V8's C++ API (not Node-API) is needed for SetJitCodeEventHandler, so
// the addon is built against the installed Node's headers and loads only into that ABI.
//
// Exports: enable() -> map path, disable() -> number of lines written, abi -> NODE_MODULE_VERSION.

#include <fcntl.h>
#include <node.h>
#include <unistd.h>
#include <v8.h>

#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

namespace {

struct MapWriter {
  std::mutex mu;
  FILE* file = nullptr;
  v8::Isolate* isolate = nullptr;
  uint64_t lines = 0;
  // Names by code start, so a CODE_MOVED event (which carries no name) can be written again at
  // the new address.
  std::unordered_map<uintptr_t, std::string> names;
  std::string path;
};

// Never destroyed: a handler may still run while the process exits.
MapWriter& writer() {
  static MapWriter* w = new MapWriter;
  return *w;
}

void write_line(MapWriter& w, uintptr_t start, size_t size, const std::string& name) {
  std::fprintf(w.file, "%" PRIxPTR " %zx %s\n", start, size, name.c_str());
  ++w.lines;
}

void on_code_event(const v8::JitCodeEvent* event) {
  MapWriter& w = writer();
  std::lock_guard<std::mutex> lock(w.mu);
  if (w.file == nullptr) return;
  const auto start = reinterpret_cast<uintptr_t>(event->code_start);
  switch (event->type) {
    case v8::JitCodeEvent::CODE_ADDED: {
      std::string name(event->name.str, event->name.len);
      for (char& c : name) {
        if (c == '\n' || c == '\r') c = ' ';  // one entry per line, whatever the name holds
      }
      write_line(w, start, event->code_len, name);
      w.names[start] = std::move(name);
      break;
    }
    case v8::JitCodeEvent::CODE_MOVED: {
      auto it = w.names.find(start);
      if (it == w.names.end()) break;
      const auto to = reinterpret_cast<uintptr_t>(event->new_code_start);
      std::string name = std::move(it->second);
      w.names.erase(it);
      write_line(w, to, event->code_len, name);
      w.names[to] = std::move(name);
      break;
    }
    case v8::JitCodeEvent::CODE_REMOVED:
      w.names.erase(start);
      break;
    default:
      break;
  }
}

void throw_error(v8::Isolate* isolate, const std::string& text) {
  isolate->ThrowException(
      v8::Exception::Error(v8::String::NewFromUtf8(isolate, text.c_str()).ToLocalChecked()));
}

void enable(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  MapWriter& w = writer();
  {
    std::lock_guard<std::mutex> lock(w.mu);
    if (w.file == nullptr) {
      w.path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
      // O_NOFOLLOW: /tmp is shared; never write through a link planted under the name.
      const int fd =
          ::open(w.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 || (w.file = ::fdopen(fd, "w")) == nullptr) {
        if (fd >= 0) ::close(fd);
        throw_error(isolate, "cannot open " + w.path);
        return;
      }
      w.lines = 0;
      w.names.clear();
    }
  }
  if (w.isolate == nullptr) {
    w.isolate = isolate;
    // Calls on_code_event for all existing code before returning (same thread, lock released).
    isolate->SetJitCodeEventHandler(v8::kJitCodeEventEnumExisting, on_code_event);
  }
  {
    std::lock_guard<std::mutex> lock(w.mu);
    std::fflush(w.file);
  }
  info.GetReturnValue().Set(v8::String::NewFromUtf8(isolate, w.path.c_str()).ToLocalChecked());
}

void disable(const v8::FunctionCallbackInfo<v8::Value>& info) {
  MapWriter& w = writer();
  if (w.isolate != nullptr) {
    w.isolate->SetJitCodeEventHandler(v8::kJitCodeEventDefault, nullptr);
    w.isolate = nullptr;
  }
  std::lock_guard<std::mutex> lock(w.mu);
  double lines = static_cast<double>(w.lines);
  if (w.file != nullptr) {
    std::fclose(w.file);
    w.file = nullptr;
  }
  w.names.clear();
  info.GetReturnValue().Set(lines);
}

void set_function(v8::Local<v8::Context> context, v8::Local<v8::Object> exports, const char* name,
                  v8::FunctionCallback fn) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::Local<v8::Function> f =
      v8::FunctionTemplate::New(isolate, fn)->GetFunction(context).ToLocalChecked();
  exports->Set(context, v8::String::NewFromUtf8(isolate, name).ToLocalChecked(), f).Check();
}

}  // namespace

// Context-aware, so that loading it a second time (a later session) initialises it again.
NODE_MODULE_INIT(/* exports, module, context */) {
  set_function(context, exports, "enable", enable);
  set_function(context, exports, "disable", disable);
  v8::Isolate* isolate = context->GetIsolate();
  exports
      ->Set(context, v8::String::NewFromUtf8(isolate, "abi").ToLocalChecked(),
            v8::Integer::New(isolate, NODE_MODULE_VERSION))
      .Check();
}
