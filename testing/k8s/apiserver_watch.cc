#include "k8s/apiserver.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "k8s/apiserver_internal.h"

// The test API server's watches: a watch opened from a resourceVersion
// (every object as ADDED from 0, what the watcher saw worked out from the
// history for a later one, 410 Gone for one older than the history), then
// the events that match it streamed as they come, with bookmarks, until
// its timeout, a cut, or the server's stop.
//
// Each resource has its own log of events; a watch waits on its
// resource's log alone, takes the events after its position under the
// store's lock (a binary search, then copies of shared pointers), and
// filters and encodes them after releasing it; an event's object is
// encoded once, for every watch.

namespace dlsched::testing {

const std::string& TestApiServer::Event::Text() const {
  std::call_once(once_, [this] { text_ = object.dump(); });
  return text_;
}

namespace {

// A watch event's line: {"type":..., "object":...}, the object's JSON text
// given.
std::string EventLine(const std::string& type, const std::string& object) {
  std::string line;
  line.reserve(object.size() + type.size() + 24);
  line += R"({"type":")";
  line += type;
  line += R"(","object":)";
  line += object;
  line += '}';
  return line;
}

// The events of a log after version `rv`.
template <class Events>
auto After(const Events& events, int64_t rv) {
  return std::upper_bound(events.begin(), events.end(), rv,
                          [](int64_t v, const auto& e) { return v < e->rv; });
}

}  // namespace

// One open watch.
struct TestApiServer::Watch {
  const Type* type = nullptr;
  Log* log = nullptr;  // its resource's
  std::string ns;
  std::string labels, fields;
  int64_t cursor = 0;
  bool bookmarks = false;
  std::chrono::steady_clock::time_point deadline;
  std::chrono::steady_clock::time_point last_sent;
  std::set<std::string> visible;     // keys of objects the watcher was shown
  std::vector<std::string> pending;  // lines to send first
  bool end_after_pending = false;
  bool table = false;  // objects as meta.k8s.io Tables (kubectl get -w)
  uint64_t drop_epoch = 0;
};

void TestApiServer::ServeWatch(const httplib::Request& req, httplib::Response& res) {
  // A watch: resolve the type, then stream.
  std::vector<std::string> segs = Split(req.path);
  std::string group, version;
  size_t at = 2;
  if (segs.size() >= 2 && segs[0] == "api") {
    version = segs[1];
  } else if (segs.size() >= 3) {
    group = segs[1];
    version = segs[2];
    at = 3;
  }
  std::vector<std::string> rest(segs.begin() + static_cast<long>(std::min(at, segs.size())),
                                segs.end());
  auto w = std::make_shared<Watch>();
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    w->ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  {
    std::lock_guard lock(mu_);
    w->type = rest.size() == 1 ? FindType(group, version, rest[0]) : nullptr;
    if (w->type == nullptr) {
      res.status = 404;
      res.set_content(Status(404, "NotFound", "no such resource").dump(), "application/json");
      return;
    }
    ++counts_["WATCH " + w->type->Id()];
    w->log = &logs_[w->type->Id()];
    w->labels = Param(req.params, "labelSelector");
    w->fields = Param(req.params, "fieldSelector");
    w->bookmarks = Param(req.params, "allowWatchBookmarks") == "true";
    w->table = req.get_header_value("Accept").find("as=Table") != std::string::npos;
    w->drop_epoch = drop_epoch_;
    const auto now = std::chrono::steady_clock::now();
    double limit = 1800;
    if (!Param(req.params, "timeoutSeconds").empty())
      limit = std::stod(Param(req.params, "timeoutSeconds"));
    if (faults_.watch_cut_seconds > 0) limit = std::min(limit, faults_.watch_cut_seconds);
    w->deadline = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(limit));
    w->last_sent = now;
    StartWatchLocked(*w, Param(req.params, "resourceVersion"));
  }
  res.status = 200;
  // "stream=watch" as the real server; it also keeps cpp-httplib from
  // gzipping the stream for clients that accept gzip (Go's do), which would
  // hold events back in the compressor.
  res.set_chunked_content_provider(
      "application/json;stream=watch",
      [this, w](size_t, httplib::DataSink& sink) { return StreamWatch(*w, sink); });
}

void TestApiServer::StartWatchLocked(Watch& w, const std::string& rv) {
  const int64_t from = rv.empty() ? 0 : std::stoll(rv);
  const bool gone_fault = faults_.gone_on_resume && from > 0 && !gone_sent_[w.type->Id()];
  if (gone_fault) gone_sent_[w.type->Id()] = true;
  if (from > 0 && (from < oldest_kept_ - 1 || gone_fault)) {
    w.pending.push_back(json({{"type", "ERROR"},
                              {"object", Status(410, "Expired",
                                                fmt::format("too old resource version: {} ({})",
                                                            from, oldest_kept_ - 1))}})
                            .dump());
    w.end_after_pending = true;
  } else if (from == 0) {
    for (const auto& [k, o] : objects_[w.type->Id()]) {
      if (!w.ns.empty() && Meta(o, "namespace") != w.ns) continue;
      if (!LabelsMatch(o, w.labels) || !FieldsMatch(o, w.fields)) continue;
      w.visible.insert(k);
      w.pending.push_back(EventLine(
          "ADDED", w.table ? TableOf(*w.type, {o}, Meta(o, "resourceVersion")).dump() : o.dump()));
    }
    w.cursor = rv_;
  } else {
    w.cursor = from;
    // What the watcher saw at `from` is what matched then: objects not
    // changed since as they are now; for the others, the first event
    // after `from` tells (ADDED: absent then; else its object, as close
    // to that state as the history goes).
    std::map<std::string, const Event*> first;
    for (auto it = After(w.log->events, from); it != w.log->events.cend(); ++it) {
      const Event& e = **it;
      first.emplace(KeyOf(Meta(e.object, "namespace"), Meta(e.object, "name")), &e);
    }
    auto matches = [&](const json& o) {
      return (w.ns.empty() || Meta(o, "namespace") == w.ns) && LabelsMatch(o, w.labels) &&
             FieldsMatch(o, w.fields);
    };
    for (const auto& [k, o] : objects_[w.type->Id()]) {
      if (!first.contains(k) && matches(o)) w.visible.insert(k);
    }
    for (const auto& [k, e] : first) {
      if (e->type != "ADDED" && matches(e->object)) w.visible.insert(k);
    }
  }
}

bool TestApiServer::StreamWatch(Watch& w, httplib::DataSink& sink) {
  auto send = [&](const std::string& line) {
    return sink.write(line.data(), line.size()) && sink.write("\n", 1);
  };
  for (const std::string& line : w.pending) {
    if (!send(line)) return false;
  }
  w.pending.clear();
  if (w.end_after_pending) {
    sink.done();
    return true;
  }
  std::vector<std::shared_ptr<const Event>> events;
  bool end = false, gone = false;
  std::chrono::steady_clock::time_point bookmark_at;
  {
    std::unique_lock lock(mu_);
    Log& log = *w.log;
    bookmark_at =
        w.last_sent + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(options_.bookmark_interval_seconds));
    log.changed.wait_until(lock, std::min(w.deadline, bookmark_at), [&] {
      return stopping_ || drop_epoch_ != w.drop_epoch ||
             (!log.events.empty() && log.events.back()->rv > w.cursor);
    });
    if (drop_epoch_ != w.drop_epoch) {
      sink.done();
      return true;
    }
    if (stopping_ || std::chrono::steady_clock::now() >= w.deadline) end = true;
    if (log.trimmed_through > w.cursor) {
      // Fell behind the kept history while connected: events of its
      // resource it was not sent are gone.
      gone = end = true;
    } else {
      events.assign(After(log.events, w.cursor), log.events.cend());
      // Every change up to now is in the log or of another resource.
      w.cursor = rv_;
    }
  }
  // The store's lock released: the events are shared and never change.
  std::vector<std::string> lines;
  if (gone) {
    lines.push_back(
        json({{"type", "ERROR"}, {"object", Status(410, "Expired", "too old resource version")}})
            .dump());
  }
  for (const auto& event : events) {
    const Event& e = *event;
    if (!w.ns.empty() && Meta(e.object, "namespace") != w.ns) continue;
    const std::string k = KeyOf(Meta(e.object, "namespace"), Meta(e.object, "name"));
    const bool match = LabelsMatch(e.object, w.labels) && FieldsMatch(e.object, w.fields);
    std::string type = e.type;
    if (type == "DELETED") {
      if (!w.visible.erase(k)) continue;
    } else if (match) {
      type = w.visible.insert(k).second ? "ADDED" : "MODIFIED";
    } else if (w.visible.erase(k)) {
      type = "DELETED";
    } else {
      continue;
    }
    lines.push_back(w.table
                        ? EventLine(type, TableOf(*w.type, {e.object}, std::to_string(e.rv)).dump())
                        : EventLine(type, e.Text()));
  }
  if (lines.empty() && !end && w.bookmarks && std::chrono::steady_clock::now() >= bookmark_at) {
    lines.push_back(json({{"type", "BOOKMARK"},
                          {"object",
                           {{"kind", w.type->kind},
                            {"apiVersion", w.type->ApiVersion()},
                            {"metadata", {{"resourceVersion", std::to_string(w.cursor)}}}}}})
                        .dump());
  }
  if (!lines.empty()) w.last_sent = std::chrono::steady_clock::now();
  for (const std::string& line : lines) {
    if (!send(line)) return false;
  }
  if (end || !sink.is_writable()) {
    sink.done();
  }
  return true;
}

}  // namespace dlsched::testing
