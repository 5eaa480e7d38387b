// Container ids from cgroup paths of each runtime, and names from their state files.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gp/proc/container.h"
#include "proc_test_support.h"

namespace gp::test::proc {
namespace {

using gp::proc::container_from_cgroup;
using gp::proc::ContainerRef;
using gp::proc::resolve_container_name;

const std::string kId = "4f1c2e3d5a6b7c8d9e0f11223344556677889900aabbccddeeff001122334455";
const std::string kPod = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";
const std::string kPodUnderscored = "0a1b2c3d_4e5f_6789_abcd_ef0123456789";

void expect_ref(const std::string& path, const std::string& runtime, const std::string& id,
                const std::string& pod = "") {
  SCOPED_TRACE(path);
  const ContainerRef r = container_from_cgroup(path);
  EXPECT_EQ(r.runtime, runtime);
  EXPECT_EQ(r.id, id);
  EXPECT_EQ(r.pod_uid, pod);
}

TEST(ContainerFromCgroup, RecognisesEachRuntime) {
  expect_ref("/system.slice/docker-" + kId + ".scope", "docker", kId);
  expect_ref("/docker/" + kId, "docker", kId);
  expect_ref("/system.slice/containerd.service/cri-containerd-" + kId + ".scope", "containerd",
             kId);
  expect_ref("/machine.slice/libpod-" + kId + ".scope/container", "podman", kId);
  expect_ref("/libpod_parent/libpod-" + kId, "podman", kId);
  expect_ref("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kPodUnderscored +
                 ".slice/cri-containerd-" + kId + ".scope",
             "containerd", kId, kPod);
  expect_ref("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kPodUnderscored +
                 ".slice/crio-" + kId + ".scope",
             "crio", kId, kPod);
  expect_ref("/kubepods/burstable/pod" + kPod + "/" + kId, "kubernetes", kId, kPod);
  expect_ref("/kubepods.slice/kubepods-pod" + kPodUnderscored + ".slice/docker-" + kId + ".scope",
             "docker", kId, kPod);
  expect_ref("/ecs/0123abcd/" + kId, "unknown", kId);
}

TEST(ContainerFromCgroup, TheInnermostContainerWins) {
  const std::string inner = "aa" + kId.substr(2);
  expect_ref("/system.slice/docker-" + kId + ".scope/system.slice/docker-" + inner + ".scope",
             "docker", inner);
  expect_ref("/system.slice/docker-" + kId + ".scope/init.scope", "docker", kId);
}

TEST(ContainerFromCgroup, IgnoresWhatIsNotAContainer) {
  expect_ref("/", "", "");
  expect_ref("", "", "");
  expect_ref("/user.slice/user-1000.slice/session-2.scope", "", "");
  expect_ref("/system.slice/docker.service", "", "");
  expect_ref("/machine.slice/libpod-conmon-" + kId + ".scope", "", "");
  expect_ref("/system.slice/crio-conmon-" + kId + ".scope", "", "");
  expect_ref("/docker/" + kId.substr(1), "", "");            // 63 digits
  expect_ref("/docker/" + kId.substr(0, 63) + "G", "", "");  // not hex
  expect_ref("/docker/" + std::string(64, 'A'), "", "");     // upper case is not an id
}

class ContainerNames : public TempTreeTest {};

TEST_F(ContainerNames, DockerConfig) {
  write("var/lib/docker/containers/" + kId + "/config.v2.json",
        R"({"StreamConfig":{},"State":{"Running":true,"Pid":123},"ID":")" + kId +
            R"(","Config":{"Env":["A=\"b\""]},"Name":"/my-redis","Driver":"overlay2"})");
  EXPECT_EQ(resolve_container_name({"docker", kId, ""}, root_), "my-redis");
  EXPECT_EQ(resolve_container_name({"unknown", kId, ""}, root_), "my-redis");
  EXPECT_EQ(resolve_container_name({"podman", kId, ""}, root_), "");
}

TEST_F(ContainerNames, PodmanStorage) {
  write(
      "var/lib/containers/storage/overlay-containers/containers.json",
      R"([{"id":"0000000000000000000000000000000000000000000000000000000000000000","names":["other"]},)"
      R"({"id":")" +
          kId +
          R"(","names":["happy_turing","alias"],"image":"abc","layer":"def",)"
          R"("metadata":"{\"image-name\":\"docker.io/library/alpine:latest\"}","created":"2024-01-01T00:00:00Z"}])");
  EXPECT_EQ(resolve_container_name({"podman", kId, ""}, root_), "happy_turing");
}

TEST_F(ContainerNames, ContainerdKubernetesAnnotations) {
  write(
      "run/containerd/io.containerd.runtime.v2.task/k8s.io/" + kId + "/config.json",
      R"({"ociVersion":"1.1.0","process":{"args":["nginx"]},"annotations":{)"
      R"("io.kubernetes.cri.container-type":"container","io.kubernetes.cri.container-name":"nginx",)"
      R"("io.kubernetes.cri.sandbox-name":"web-7d4b9c","io.kubernetes.cri.sandbox-namespace":"prod",)"
      R"("io.kubernetes.cri.sandbox-id":"abc"}})");
  EXPECT_EQ(resolve_container_name({"containerd", kId, kPod}, root_),
            "k8s_nginx_web-7d4b9c_prod_" + kPod + "_0");
  // Without a pod uid (not in the cgroup path, not annotated) there is no honest name.
  EXPECT_EQ(resolve_container_name({"containerd", kId, ""}, root_), "");
}

TEST_F(ContainerNames, CrioNamesItself) {
  write("var/lib/containers/storage/overlay-containers/" + kId + "/userdata/config.json",
        R"({"annotations":{"io.kubernetes.cri-o.Name":"k8s_app_api-5f6_default_)" + kPod +
            R"(_2","io.kubernetes.pod.name":"api-5f6"}})");
  EXPECT_EQ(resolve_container_name({"crio", kId, kPod}, root_),
            "k8s_app_api-5f6_default_" + kPod + "_2");
}

TEST_F(ContainerNames, UnknownOrHostileInputsGiveNoName) {
  write("var/lib/docker/containers/" + kId + "/config.v2.json",
        R"({"Name": "/x", )");  // truncated JSON
  EXPECT_EQ(resolve_container_name({"docker", kId, ""}, root_), "");
  EXPECT_EQ(resolve_container_name({"docker", "../../../../etc", ""}, root_), "");
  EXPECT_EQ(resolve_container_name({"", "", ""}, root_), "");
  const std::string deep(100000, '[');
  write("var/lib/containers/storage/overlay-containers/containers.json", deep);
  EXPECT_EQ(resolve_container_name({"podman", kId, ""}, root_), "");
}

}  // namespace
}  // namespace gp::test::proc
