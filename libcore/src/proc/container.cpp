// Container id from cgroup paths and container names from runtimes' state files
// (forms and sources listed in gp/proc/container.h).

#include "gp/proc/container.h"

#include <algorithm>
#include <array>
#include <optional>

#include "gp/util/json.h"
#include "proc/proc_files.h"

namespace gp::proc {
namespace {

constexpr size_t kIdLength = 64;
constexpr size_t kMaxStateFile = 16u << 20;  // containers.json grows with the container count

bool is_container_id(std::string_view s) {
  return s.size() == kIdLength && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

struct Prefix {
  std::string_view prefix;
  std::string_view runtime;
};
// Longer prefixes first: "crio-conmon-" must not be read as "crio-" + id.
constexpr std::array<Prefix, 4> kScopePrefixes = {{
    {"cri-containerd-", "containerd"},
    {"docker-", "docker"},
    {"crio-", "crio"},
    {"libpod-", "podman"},
}};

// "docker-<id>.scope" and friends; nullopt when the component is not one.
std::optional<ContainerRef> from_scope_component(std::string_view c) {
  if (c.size() > 6 && c.substr(c.size() - 6) == ".scope") c.remove_suffix(6);
  for (const Prefix& p : kScopePrefixes) {
    if (c.substr(0, p.prefix.size()) == p.prefix && is_container_id(c.substr(p.prefix.size()))) {
      return ContainerRef{std::string(p.runtime), std::string(c.substr(p.prefix.size())), {}};
    }
  }
  return std::nullopt;
}

// "pod<uid>" (cgroupfs driver) or "kubepods-<qos>-pod<uid_with_underscores>.slice" (systemd).
std::string pod_uid_of(std::string_view c) {
  if (c.size() > 6 && c.substr(c.size() - 6) == ".slice") c.remove_suffix(6);
  const size_t at = c.rfind("pod");
  if (at == std::string_view::npos) return {};
  if (at != 0 && c[at - 1] != '-') return {};
  std::string uid(c.substr(at + 3));
  std::replace(uid.begin(), uid.end(), '_', '-');
  // A uid is 36 characters of hex and dashes; anything else is not a pod component.
  const bool ok = uid.size() == 36 && std::all_of(uid.begin(), uid.end(), [](char ch) {
                    return ch == '-' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
                  });
  return ok ? uid : std::string();
}

}  // namespace

ContainerRef container_from_cgroup(std::string_view path) {
  const std::vector<std::string> parts = split(path, '/');
  ContainerRef ref;
  size_t found_at = parts.size();
  for (size_t i = parts.size(); i-- > 0;) {
    if (auto r = from_scope_component(parts[i])) {
      ref = *r;
      found_at = i;
      break;
    }
    if (is_container_id(parts[i])) {
      const bool docker_parent = i > 0 && parts[i - 1] == "docker";
      const bool k8s = path.find("kubepods") != std::string_view::npos;
      ref = ContainerRef{docker_parent ? "docker" : (k8s ? "kubernetes" : "unknown"), parts[i], {}};
      found_at = i;
      break;
    }
  }
  if (ref.id.empty()) return {};
  for (size_t i = found_at; i-- > 0;) {
    std::string uid = pod_uid_of(parts[i]);
    if (!uid.empty()) {
      ref.pod_uid = std::move(uid);
      break;
    }
  }
  return ref;
}

namespace {

std::optional<gp::json::Value> load_json(const std::string& path) {
  auto text = read_file(path, kMaxStateFile);
  if (!text) return std::nullopt;
  auto doc = gp::json::parse(*text);
  if (!doc) return std::nullopt;
  return std::move(*doc);
}

std::string docker_name(const std::string& root, const std::string& id) {
  auto doc = load_json(root + "/var/lib/docker/containers/" + id + "/config.v2.json");
  if (!doc) return {};
  std::string name = doc->get_string("Name");
  if (!name.empty() && name[0] == '/') name.erase(0, 1);
  return name;
}

// containers/storage (podman, cri-o): names[0] of the entry with this id.
std::string storage_name(const std::string& root, const std::string& id) {
  auto doc = load_json(root + "/var/lib/containers/storage/overlay-containers/containers.json");
  if (!doc || doc->type != gp::json::Type::array) return {};
  for (const gp::json::Value& c : doc->items) {
    if (c.get_string("id") != id) continue;
    const gp::json::Value* names = c.find("names");
    if (names && !names->items.empty() && names->items[0].type == gp::json::Type::string) {
      return names->items[0].text;
    }
  }
  return {};
}

std::string or_default(std::string value, const char* fallback) {
  return value.empty() ? fallback : value;
}

// gProfiler's dockershim form from a bundle's annotations (containerd or cri-o keys).
std::string kubernetes_name(const gp::json::Value& annotations, const std::string& pod_uid_hint) {
  const bool sandbox = annotations.get_string("io.kubernetes.cri.container-type") == "sandbox";
  std::string container =
      sandbox ? "POD" : annotations.get_string("io.kubernetes.cri.container-name");
  if (container.empty()) container = annotations.get_string("io.kubernetes.container.name");
  std::string pod = annotations.get_string("io.kubernetes.cri.sandbox-name");
  if (pod.empty()) pod = annotations.get_string("io.kubernetes.pod.name");
  std::string ns = annotations.get_string("io.kubernetes.cri.sandbox-namespace");
  if (ns.empty()) ns = annotations.get_string("io.kubernetes.pod.namespace");
  std::string uid = annotations.get_string("io.kubernetes.cri.sandbox-uid");
  if (uid.empty()) uid = annotations.get_string("io.kubernetes.pod.uid");
  if (uid.empty()) uid = pod_uid_hint;
  if (container.empty() || pod.empty() || ns.empty() || uid.empty()) return {};
  const std::string restarts =
      or_default(annotations.get_string("io.kubernetes.container.restartCount"), "0");
  return "k8s_" + container + "_" + pod + "_" + ns + "_" + uid + "_" + restarts;
}

std::string bundle_name(const std::string& config_path, const std::string& pod_uid_hint) {
  auto doc = load_json(config_path);
  if (!doc) return {};
  const gp::json::Value* annotations = doc->find("annotations");
  if (!annotations) return {};
  // cri-o records the dockershim-style name itself.
  std::string name = annotations->get_string("io.kubernetes.cri-o.Name");
  return name.empty() ? kubernetes_name(*annotations, pod_uid_hint) : name;
}

}  // namespace

std::string resolve_container_name(const ContainerRef& ref, const std::string& host_root) {
  if (!is_container_id(ref.id)) return {};  // the id becomes a path component: never trust it
  const std::string& root = host_root;
  const bool any = ref.runtime == "kubernetes" || ref.runtime == "unknown";
  std::string name;
  if (ref.runtime == "docker" || any) name = docker_name(root, ref.id);
  if (name.empty() && (ref.runtime == "containerd" || any)) {
    name = bundle_name(
        root + "/run/containerd/io.containerd.runtime.v2.task/k8s.io/" + ref.id + "/config.json",
        ref.pod_uid);
  }
  if (name.empty() && (ref.runtime == "crio" || any)) {
    name = bundle_name(
        root + "/var/lib/containers/storage/overlay-containers/" + ref.id + "/userdata/config.json",
        ref.pod_uid);
  }
  if (name.empty() && (ref.runtime == "podman" || ref.runtime == "crio" || any))
    name = storage_name(root, ref.id);
  return name;
}

}  // namespace gp::proc
