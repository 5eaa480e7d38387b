#pragma once
// Reads the execution samples (or allocation events) of a JFR recording as the JDK's `jfr` tool
// prints them
// (`jfr print --json --events jdk.ExecutionSample --stack-depth N rec.jfr`) into gp stacks.
//
// The JSON is large (several KB per sample: every frame repeats its class loader chain), so
// it is read as a stream: each element of recording.events is cut out and parsed on its own,
// and memory stays bounded by one event plus the distinct stacks.
//
// Frames are named as async-profiler names them with `sig` in gProfiler (gprofiler.md §2.5):
// "pkg/Class.method(Descriptor)Ret", the class name with '/', a ';' in the descriptor turned
// into '|': e.g. "Fibonacci.main([Ljava/lang/String|)V".

#include <istream>
#include <string>
#include <string_view>

#include "gp/runtime/adapter.h"
#include "gp/util/json.h"
#include "stack_table.h"

namespace gp::runtime::java {

// "pkg/Class" + "method" + "(Ljava/lang/String;)V" → "pkg/Class.method(Ljava/lang/String|)V";
// with a line (not 0): "pkg/Class.method:12(Ljava/lang/String|)V".
std::string java_frame_name(std::string_view class_name, std::string_view method,
                            std::string_view descriptor, uint32_t line = 0);

// How frames are named.
struct JfrFrameStyle {
  // gProfiler's --java-include-method-modifiers: the method's modifiers first, in Java's order
  // ("private static Fibonacci.fibonacci(I)J").
  bool method_modifiers = false;
  // gProfiler's --java-line-numbers line-of-function: the frame's line within its method after
  // the method's name ("Fibonacci.fibonacci:7(I)J"), as gProfiler's async-profiler build writes
  // it; frames without a line keep their plain name.
  bool line_numbers = false;
};

// A method's access flags (JVMS 4.6) as Java source spells them, in java.lang.reflect.Modifier's
// order: "private static " for 0x000a; "" for none.
std::string java_method_modifiers(int64_t flags);

// One element of stackTrace.frames: its name and kind (JFR's "Inlined" → inlined, as
// async-profiler's `ann` marks it "_[i]"; "Interpreted", "JIT compiled", "Native" → java).
Frame jfr_frame(const json::Value& frame, const JfrFrameStyle& style = {});

// One jdk.ExecutionSample event object → a root-first stack with count 1 (tid = the OS thread
// id, thread_name = the Java name). Error when the event has no stack trace.
Result<Stack> jfr_sample(const json::Value& event, const JfrFrameStyle& style = {});

// "[B" → "byte[]", "[[Ljava/lang/String;" → "java.lang.String[][]", "java/lang/String" →
// "java.lang.String": a JVM class name as async-profiler names allocated classes (dotted, as
// gProfiler's allocation test expects "java.lang.String[]").
std::string java_class_name(std::string_view internal);

// One allocation event → a root-first stack whose count is the bytes it stands for and whose leaf
// frame is the allocated class: jdk.ObjectAllocationSample by its `weight` (JDK 16+: the bytes the
// thread allocated since its previous sample), jdk.ObjectAllocationInNewTLAB by `tlabSize`,
// jdk.ObjectAllocationOutsideTLAB by `allocationSize`. The class frame is marked as
// async-profiler's alloc event marks it: inlined ("_[i]") in a TLAB, kernel ("_[k]") outside.
Result<Stack> jfr_allocation(const json::Value& event, const JfrFrameStyle& style = {});

// The events read_jfr_json reads.
enum class JfrEvents {
  execution,   // jdk.ExecutionSample, one sample each
  allocation,  // the allocation events above, in bytes; when a recording has both kinds,
               // jdk.ObjectAllocationSample wins (the TLAB events would count the bytes twice)
};

struct JfrReadStats {
  uint64_t events = 0;     // events read (of the kind asked for)
  uint64_t truncated = 0;  // of them, stacks the JVM cut at its stack depth
  uint64_t bad = 0;        // events that could not be parsed (skipped)
};

// Streams `jfr print --json` output into `table`. Error when the text is not such output.
Result<JfrReadStats> read_jfr_json(std::istream& in, StackTable& table,
                                   JfrEvents which = JfrEvents::execution,
                                   const JfrFrameStyle& style = {});

}  // namespace gp::runtime::java
