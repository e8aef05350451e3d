// Where a job with hosts sends mpirun and its telemetry: real name resolution and routes.
#include "launch/host_placement.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ranklab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(HostPlacement, HostsAndMcaBecomeMpirunArguments) {
  LaunchSpec launch;
  launch.hosts = {"a:2", "b:2"};
  launch.mca = {"btl_tcp_if_include=10.0.0.0/24"};
  EXPECT_THAT(placementArguments(launch),
              ElementsAre("--host", "a:2,b:2", "--mca", "btl_tcp_if_include", "10.0.0.0/24"));
}

// One machine: MPI between the ranks over shared memory only (no TCP listener on any
// interface), mpirun's TCP kept to loopback, unless the job's own mca says otherwise.
TEST(HostPlacement, OneMachineKeepsOpenMpiOffTheNetwork) {
  EXPECT_THAT(placementArguments(LaunchSpec{}),
              ElementsAre("--mca", "btl", "self,vader", "--mca", "oob_tcp_if_include", "lo",
                          "--mca", "oob_tcp_disable_ipv6_family", "1"));
  LaunchSpec own;
  own.mca = {"btl=self,tcp", "oob_tcp_if_include=eth0"};
  EXPECT_THAT(placementArguments(own),
              ElementsAre("--mca", "btl", "self,tcp", "--mca", "oob_tcp_if_include", "eth0"));
}

TEST(HostPlacement, AHostfileGivesItsFirstWords) {
  const std::string path = "/tmp/ranklab-hostfile-" + std::to_string(getpid());
  std::ofstream(path) << "# the lab\nnode1 slots=2\n\n  node2 slots=2 # the other\n";
  LaunchSpec launch;
  launch.hostfile = path;
  EXPECT_THAT(hostNames(launch), ElementsAre("node1", "node2"));
  EXPECT_THAT(placementArguments(launch), ElementsAre("--hostfile", path));
  std::remove(path.c_str());
  EXPECT_THROW(hostNames(launch), std::runtime_error) << "gone: named, not an empty list";
}

TEST(HostPlacement, TelemetryStaysOnLoopbackForThisMachine) {
  EXPECT_EQ(telemetryAddress(LaunchSpec{}), "127.0.0.1");
  LaunchSpec launch;
  launch.hosts = {"localhost:2", "127.0.0.1:2"};
  EXPECT_EQ(telemetryAddress(launch), "127.0.0.1");
  launch.telemetry_address = "10.1.2.3";
  EXPECT_EQ(telemetryAddress(launch), "10.1.2.3") << "the job's address wins";
}

TEST(HostPlacement, AnUnknownHostNamesTheKeyToSet) {
  LaunchSpec launch;
  launch.hosts = {"no-such-host.invalid:2"};
  try {
    telemetryAddress(launch);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"no-such-host.invalid\""));
    EXPECT_THAT(e.what(), HasSubstr("launch.telemetry_address"));
  }
}

}  // namespace
}  // namespace ranklab
