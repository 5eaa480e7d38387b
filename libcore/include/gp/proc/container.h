#pragma once
// Container identity from a process's cgroup path, and its name from the runtime's on-disk state.
//
// Recognised cgroup path forms (the last matching path component wins):
//   docker (systemd driver)      .../docker-<64hex>.scope
//   docker (cgroupfs driver)     /docker/<64hex>
//   containerd / CRI (systemd)   .../cri-containerd-<64hex>.scope
//   cri-o                        .../crio-<64hex>.scope, .../crio-conmon-<id>.scope is not a
//   container podman                       .../libpod-<64hex>.scope, /libpod_parent/libpod-<id>/...
//   kubernetes (cgroupfs driver) /kubepods[/<qos>]/pod<uid>/<64hex>
//   kubernetes (systemd driver)
//   /kubepods.slice/.../kubepods-<qos>-pod<uid_with_underscores>.slice/<runtime>-<id>.scope
// The pod uid (dashes restored) is returned for kubernetes paths.

#include <string>
#include <string_view>

namespace gp::proc {

struct ContainerRef {
  std::string runtime;  // "docker", "containerd", "crio", "podman", "kubernetes" (cgroupfs k8s
                        // without prefix); "" = none
  std::string id;       // 64 lower-case hex digits; "" when the path is not a container's
  std::string pod_uid;  // kubernetes pod uid, "" when not in a pod
};

ContainerRef container_from_cgroup(std::string_view cgroup_path);

// Container name when it can be resolved offline from the runtime's state files on this host,
// else "" (never a guess):
//  - docker:     <root>/var/lib/docker/containers/<id>/config.v2.json "Name", without the '/';
//  - podman:     <root>/var/lib/containers/storage/overlay-containers/containers.json, the entry
//                with this id, "names"[0] (rootful storage only);
//  - containerd: the OCI bundle
//  <root>/run/containerd/io.containerd.runtime.v2.task/<ns>/<id>/config.json
//    and cri-o:  <root>/var/lib/containers/storage/overlay-containers/<id>/userdata/config.json;
//                their Kubernetes annotations give gProfiler's dockershim form
//                "k8s_<container>_<pod>_<namespace>_<pod uid>_<restart count>" (restart count 0
//                when the runtime did not record it); a non-Kubernetes containerd container has no
//                name, so "".
// `host_root` prefixes every path ("" = "/"; tests use a fake tree).
std::string resolve_container_name(const ContainerRef& ref, const std::string& host_root = "");

}  // namespace gp::proc
