// The Studio and Pyroscope targets of gp-upload.
#include "targets.h"

#include "gp/util/version.h"

namespace gp::upload_tool {

using namespace gp::upload;

void Delivery::apply(HttpRequest& r) const {
  if (r.method == "POST") r.timeout_s = timeout;
  r.verify_tls = verify;
  r.ca_file = ca_file;
}

HttpResponse Delivery::send(const HttpRequest& r, const std::string& what) const {
  // The URL carries the token as `key`: log it redacted only.
  gp::cli::info(2, r.method + " " + redact(hide_userinfo(r.url), secret) + " (" +
                       std::to_string(r.body.size()) + " bytes)");
  HttpResponse resp =
      perform_with_retries(r, retry, [&](int attempt, const HttpResponse& failed, double delay) {
        gp::cli::info(1, redact(what + ": " + describe_failure(failed), secret) + "; retry " +
                             std::to_string(attempt) + " in " + std::to_string(delay).substr(0, 4) +
                             " s");
      });
  // gProfiler's --curlify-requests line (its logger's "message (extra=...)" form).
  if (curlify)
    gp::cli::info(0, "API request (curl_command=" + curl_command(r, secret) +
                         ", status_code=" + std::to_string(resp.status) + ")");
  return resp;
}

SendResult from_response(const HttpResponse& r, const std::string& secret) {
  if (r.ok()) return {};
  return {r.transient ? Outcome::transient : Outcome::permanent,
          redact(describe_failure(r), secret)};
}

StudioTarget::StudioTarget(const UploadArgs& args, const Delivery& d, const HostFacts& host,
                           std::string gpid_path)
    : delivery_(d), host_(host), gpid_path_(std::move(gpid_path)) {
  config_ = {args.server_host, args.token, args.service_name, host.hostname, kVersion};
  if (!gpid_path_.empty()) gpid_ = load_gpid_file(gpid_path_);
}

SendResult StudioTarget::check_health() {
  HttpRequest r = health_check_request(config_, host_.now);
  delivery_.apply(r);
  r.timeout_s = std::min(5.0, delivery_.timeout);
  return from_response(delivery_.send(r, "Studio health check"), config_.token);
}

SendResult StudioTarget::send(const ColText& col, std::optional<int64_t> start,
                              std::optional<int64_t> end) {
  json::Value header = col.header ? *col.header : minimal_header();
  complete_metadata(header, host_);
  StudioTimes times = studio_times(header, host_.now, start, end);
  const json::Value* md = header.find("metadata");
  std::string hostname = md->get_string("hostname", host_.hostname);
  std::string body = profile_body_json(
      times, hostname, profile_text(header, col.stacks), gpid_, md->get_string("spawn_time"),
      header_metric(header, "cpu_avg"), header_metric(header, "mem_avg"));
  auto req = profile_request(config_, host_.now, body);
  if (!req) return {Outcome::permanent, req.error().message};
  delivery_.apply(*req);
  HttpResponse resp = delivery_.send(*req, "Studio upload");
  SendResult result = from_response(resp, config_.token);
  if (result.outcome != Outcome::sent) return result;
  std::string gpid = gpid_from_response(resp.body);
  if (!gpid.empty() && gpid != "0" && gpid != gpid_) {
    gpid_ = gpid;
    if (!gpid_path_.empty()) {
      if (auto st = save_gpid_file(gpid_path_, gpid_); !st) gp::cli::warning(st.error().message);
    }
  }
  return result;
}

PyroscopeTarget::PyroscopeTarget(const UploadArgs& args, const Delivery& d)
    : chunk_bytes_(args.pyroscope_chunk_bytes), delivery_(d) {
  config_.url = args.pyroscope;
  config_.app_name = !args.pyroscope_app.empty()  ? args.pyroscope_app
                     : !args.service_name.empty() ? args.service_name + ".cpu"
                                                  : "gp.cpu";
  for (const std::string& kv : args.pyroscope_labels) {
    size_t eq = kv.find('=');
    config_.labels.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
  }
  config_.user = args.pyroscope_user;
  config_.password = args.pyroscope_password;
  config_.bearer_token = args.pyroscope_token;
  config_.tenant = args.pyroscope_tenant;
}

SendResult PyroscopeTarget::send(const ColText& col, const StudioTimes& times) {
  PyroscopeConfig c = config_;
  c.sample_rate = header_sample_rate(col, 11);
  if (col.header) {
    const json::Value* md = col.header->find("metadata");
    std::string host = md != nullptr ? md->get_string("hostname") : "";
    bool has_host = false;
    for (const auto& kv : c.labels) has_host |= kv.first == "hostname";
    if (!host.empty() && !has_host) c.labels.emplace_back("hostname", host);
  }
  PyroscopeChunks chunks = pyroscope_chunks(col, chunk_bytes_);
  if (chunks.dropped_long > 0)
    gp::cli::warning(std::to_string(chunks.dropped_long) +
                     " stack line(s) longer than Pyroscope's 64 KiB line limit were not sent");
  if (chunks.bodies.size() > 1)
    gp::cli::info(
        1, "Pyroscope: profile split into " + std::to_string(chunks.bodies.size()) + " requests");
  std::string secret = c.bearer_token.empty() ? c.password : c.bearer_token;
  for (std::string& body : chunks.bodies) {
    HttpRequest r =
        ingest_request(c, times.start, std::max(times.end, times.start + 1), std::move(body));
    delivery_.apply(r);
    SendResult res = from_response(delivery_.send(r, "Pyroscope upload"), secret);
    if (res.outcome != Outcome::sent) return res;
  }
  return {};
}

}  // namespace gp::upload_tool
