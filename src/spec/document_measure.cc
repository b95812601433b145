// See document_measure.h.
#include "spec/document_measure.h"

#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

namespace tuneplane::spec {
namespace {

constexpr std::size_t kMiB = 1024 * 1024;
// A key longer than this is shortened in a field path (the path is for people).
constexpr std::size_t kMaxKeyInPath = 64;

std::string bytesText(std::size_t bytes) {
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Thrown by the handler to stop yaml-cpp's parser at once; caught in measureDocument.
struct Stop {
  DocumentBreach breach;
};

struct Size {
  std::size_t bytes = 0;
  std::size_t values = 0;
};

// Adds up every node as the reader will meet it: an alias adds the whole expanded size of
// its anchor. Totals only grow, so an anchored collection's size is the growth between its
// start and its end.
class Measurer : public YAML::EventHandler {
 public:
  explicit Measurer(const DocumentLimits& limits) : limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override {
    add({0, 1});
    if (anchor != YAML::NullAnchor) anchors_[anchor] = {0, 1};
    finished("");
  }

  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    if (open_.count(anchor) != 0) {
      throw Stop{{"document_too_large", path(),
                  "an alias refers to a list or map that contains it, so it never ends once "
                  "expanded"}};
    }
    add(anchors_.at(anchor));  // yaml-cpp refuses an undefined alias before calling this
    finished("?");
  }

  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    add({value.size(), 1});
    if (anchor != YAML::NullAnchor) anchors_[anchor] = {value.size(), 1};
    finished(value);
  }

  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(anchor, false);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(anchor, true);
  }
  void OnMapEnd() override { close(); }

 private:
  // An open list or map.
  struct Frame {
    bool map = false;
    YAML::anchor_t anchor = YAML::NullAnchor;
    Size at_start;
    std::string path;         // its own field path
    std::size_t entries = 0;  // list: entries done; map: keys and values done
    std::string key;          // map: the last key read (shortened), for its value's path
  };

  // The field path of the node being read: its collection's path and its place there. A map
  // key is reported at the map itself.
  std::string path() const {
    if (stack_.empty()) return "";
    const Frame& f = stack_.back();
    if (!f.map) return f.path + "[" + std::to_string(f.entries) + "]";
    if (f.entries % 2 == 0) return f.path;
    return f.path.empty() ? f.key : f.path + "." + f.key;
  }

  void add(Size size) {
    total_.bytes += size.bytes;
    total_.values += size.values;
    if (total_.bytes > limits_.max_text_bytes) {
      throw Stop{{"document_too_large", path(),
                  "the document holds more than " + bytesText(limits_.max_text_bytes) +
                      " of text once its YAML aliases are expanded; write the values out "
                      "and keep them smaller"}};
    }
    if (total_.values > limits_.max_values) {
      throw Stop{{"too_many_values", path(),
                  "the document holds more than " + std::to_string(limits_.max_values) +
                      " values (scalars, lists and maps, keys included) once its YAML aliases "
                      "are expanded"}};
    }
  }

  void open(YAML::anchor_t anchor, bool map) {
    std::string own = path();
    add({0, 1});
    if (anchor != YAML::NullAnchor) open_.insert(anchor);
    stack_.push_back(Frame{map, anchor, total_, std::move(own), 0, {}});
  }

  void close() {
    const Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.anchor != YAML::NullAnchor) {
      open_.erase(f.anchor);
      // The collection's own value was counted before at_start was taken.
      anchors_[f.anchor] = {total_.bytes - f.at_start.bytes, total_.values - f.at_start.values + 1};
    }
    finished("?");
  }

  // A node is complete: its collection moves on. `text` is a scalar's value (a map key).
  void finished(const std::string& text) {
    if (stack_.empty()) return;
    Frame& f = stack_.back();
    if (f.map && f.entries % 2 == 0) {
      f.key = text.size() > kMaxKeyInPath ? text.substr(0, kMaxKeyInPath) + "..." : text;
    }
    ++f.entries;
  }

  const DocumentLimits& limits_;
  Size total_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Size> anchors_;  // closed anchors, expanded
  std::unordered_set<YAML::anchor_t> open_;           // anchored collections being read
};

}  // namespace

std::string parseErrorMessage(int line, int column, const std::string& what) {
  return "not valid YAML or JSON: line " + std::to_string(line + 1) + ", column " +
         std::to_string(column + 1) + ": " + what;
}

std::optional<DocumentBreach> measureDocument(std::string_view text, const DocumentLimits& limits) {
  std::istringstream in{std::string(text)};
  Measurer measurer(limits);
  try {
    YAML::Parser parser(in);
    parser.HandleNextDocument(measurer);
  } catch (const Stop& stop) {
    return stop.breach;
  } catch (const YAML::Exception& e) {
    return DocumentBreach{"parse_error", "", parseErrorMessage(e.mark.line, e.mark.column, e.msg)};
  }
  return std::nullopt;
}

}  // namespace tuneplane::spec
