// Appids from command lines: the cases of gProfiler's application_identifiers (gprofiler.md §6,
// test_appids.py), with paths resolved in a throw-away root.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "gp/runtime/appid.h"
#include "gp/util/json.h"
#include "runtime_core_support.h"

namespace gp::runtime {
namespace {

using Args = std::vector<std::string>;

class RuntimeAppId : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gp-appid-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }
  void write(const std::string& rel, const std::string& text) {
    std::system(("mkdir -p \"$(dirname '" + root_ + rel + "')\"").c_str());
    std::ofstream(root_ + rel) << text;
  }
  std::optional<std::string> id(Runtime r, Args a, std::string cwd = "/my/dir") {
    return app_id(r, a, {cwd, root_, {}});
  }
  std::string root_;
};

TEST_F(RuntimeAppId, PythonScriptAndModule) {
  EXPECT_EQ(id(Runtime::python, {"python", "mod.py"}), "python: mod.py (/my/dir/mod.py)");
  EXPECT_EQ(id(Runtime::python, {"/usr/bin/python3.11", "/abs/app.py", "x"}),
            "python: /abs/app.py (/abs/app.py)");
  EXPECT_EQ(id(Runtime::python, {"python3", "-m", "http.server"}), "python: -m http.server");
  EXPECT_EQ(id(Runtime::python, {"python3", "-c", "print(1)"}), std::nullopt);
  EXPECT_EQ(id(Runtime::python, {"python3"}), std::nullopt);
  EXPECT_EQ(id(Runtime::python, {"python3", "-m", "pyspark.daemon"}), "pyspark");
  EXPECT_EQ(id(Runtime::python, {"python3", "sub/../app.py"}),
            "python: sub/../app.py (/my/dir/app.py)");
}

TEST_F(RuntimeAppId, Gunicorn) {
  EXPECT_EQ(id(Runtime::python, {"/usr/bin/python3", "/usr/local/bin/gunicorn", "my.wsgi:app"}),
            "gunicorn: my.wsgi:app (/my/dir/my/wsgi.py)");
  EXPECT_EQ(id(Runtime::python, {"gunicorn", "-b", "0.0.0.0:8000", "-w", "4", "my.wsgi:app"}),
            "gunicorn: my.wsgi:app (/my/dir/my/wsgi.py)");
  EXPECT_EQ(id(Runtime::python, {"gunicorn", "--bind", "0.0.0.0:80"}),
            "gunicorn: unknown app name (unknown app name)");
  EXPECT_EQ(id(Runtime::python, {"gunicorn: worker [my.wsgi:app]", "", ""}),
            "gunicorn: my.wsgi:app (/my/dir/my/wsgi.py)");
  EXPECT_EQ(id(Runtime::python, {"uvicorn", "--factory", "api.main:create"}),
            "uvicorn: api.main:create (/my/dir/api/main.py)");
}

TEST_F(RuntimeAppId, Uwsgi) {
  EXPECT_EQ(id(Runtime::python, {"uwsgi", "-w", "my.wsgi"}), "uwsgi: my.wsgi (/my/dir/my/wsgi.py)");
  EXPECT_EQ(id(Runtime::python, {"uwsgi", "--wsgi-file=app.py"}), "uwsgi: app.py (/my/dir/app.py)");
  write("/my/dir/site.ini", "[other]\nmodule = no\n[uwsgi]\nhttp = :80\nmodule = site.wsgi\n");
  EXPECT_EQ(id(Runtime::python, {"uwsgi", "--ini", "site.ini"}),
            "uwsgi: site.ini (/my/dir/site/wsgi.py)");
  EXPECT_EQ(id(Runtime::python, {"uwsgi", "site.ini"}), "uwsgi: site.ini (/my/dir/site/wsgi.py)");
  write("/my/dir/bare.ini", "[uwsgi]\nhttp = :80\n");
  EXPECT_EQ(id(Runtime::python, {"uwsgi", "--ini=bare.ini"}), "uwsgi: bare.ini");
  EXPECT_EQ(id(Runtime::python, {"uwsgi", "--http", ":80"}),
            "uwsgi: ini file / wsgi module not found");
}

TEST_F(RuntimeAppId, Celery) {
  EXPECT_EQ(id(Runtime::python, {"/venv/bin/python", "/venv/bin/celery", "-A", "proj", "worker"}),
            "celery: proj (/my/dir/proj.py)");
  EXPECT_EQ(id(Runtime::python, {"celery", "--app=proj.app", "worker"}),
            "celery: proj.app (/my/dir/proj/app.py)");
  EXPECT_EQ(id(Runtime::python, {"python3", "-m", "celery", "-Aproj", "worker"}),
            "celery: proj (/my/dir/proj.py)");
  EXPECT_EQ(id(Runtime::python, {"celery", "worker", "-Q", "emails"}),
            "celery queue: emails (/my/dir)");
  EXPECT_EQ(id(Runtime::python, {"celery", "worker"}), std::nullopt);
}

TEST_F(RuntimeAppId, JavaNodeRuby) {
  EXPECT_EQ(id(Runtime::java, {"java", "-Xmx1g", "-jar", "Fibonacci.jar", "10"}),
            "java: Fibonacci.jar");
  EXPECT_EQ(id(Runtime::java, {"java", "-cp", "a.jar:b.jar", "-Dx=y", "com.acme.Main", "arg"}),
            "java: com.acme.Main");
  EXPECT_EQ(id(Runtime::java, {"java", "-m", "app/com.acme.Main"}), "java: app/com.acme.Main");
  // gProfiler's --app-id-args-filter: the JVM options (not the class path, not the program's
  // own arguments) that match a filter, in their order.
  AppContext filtered{"/my/dir", root_, {std::regex("^-Dservice="), std::regex("Xmx")}};
  EXPECT_EQ(app_id(Runtime::java,
                   {"java", "-Xmx1g", "-cp", "x.jar", "-Dservice=web", "-Dother=1", "-jar",
                    "app.jar", "-Dservice=not-a-jvm-arg"},
                   filtered),
            "java: app.jar (-Xmx1g -Dservice=web)");
  EXPECT_EQ(app_id(Runtime::java, {"java", "-Dother=1", "Main"}, filtered), "java: Main");
  EXPECT_EQ(id(Runtime::node, {"node", "--require", "x.js", "-r=y", "server.js"}),
            "nodejs: server.js (/my/dir/server.js)");
  EXPECT_EQ(id(Runtime::node, {"node", "--require=hook.js", "/srv/app.js"}),
            "nodejs: /srv/app.js (/srv/app.js)");
  EXPECT_EQ(id(Runtime::ruby, {"ruby", "-r", "bundler/setup.rb", "-rjson", "app.rb"}),
            "ruby: app.rb (/my/dir/app.rb)");
  EXPECT_EQ(id(Runtime::php, {"php", "index.php"}), std::nullopt);
  EXPECT_EQ(id(Runtime::dotnet, {"dotnet", "app.dll"}), std::nullopt);
}

// Links are resolved inside the process's root: an absolute link target means the container's
// path, never the host's.
TEST_F(RuntimeAppId, SymlinksResolveInsideTheRoot) {
  write("/srv/real/app.py", "");
  ASSERT_EQ(::symlink("/srv/real", (root_ + "/srv/current").c_str()), 0);
  ASSERT_EQ(::symlink("../../../../../../etc", (root_ + "/srv/escape").c_str()), 0);
  EXPECT_EQ(id(Runtime::python, {"python3", "current/app.py"}, "/srv"),
            "python: current/app.py (/srv/real/app.py)");
  EXPECT_EQ(file_path("escape/passwd", {"/srv", root_, {}}), "/etc/passwd");
}

TEST(RuntimeAppMetadata, OfARealPythonProcess) {
  test::DetachedProcess py({test::system_python(), "-c", "import time; time.sleep(60)"});
  ASSERT_TRUE(py.wait_for_map("python3"));
  Target t;
  t.pid = py.pid();
  t.runtime = Runtime::python;
  t.exe = "/usr/bin/python3.11";
  t.root = "/proc/" + std::to_string(py.pid()) + "/root";
  auto meta = json::parse(app_metadata_json(t, true, "{\"extra\": 1}"));
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->get_string("exe"), "/usr/bin/python3.11");
  EXPECT_EQ(meta->get_string("execfn"), test::system_python());
  EXPECT_EQ(meta->get_string("arch"), "x86_64");
  EXPECT_EQ(meta->get_string("python_version").rfind("Python 3.11.", 0), 0u) << json::dump(*meta);
  EXPECT_EQ(meta->get_string("exe_elfid").rfind("buildid:", 0), 0u);
  ASSERT_NE(meta->find("extra"), nullptr);
}

}  // namespace
}  // namespace gp::runtime
