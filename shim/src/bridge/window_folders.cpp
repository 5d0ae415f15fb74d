#include "bridge/window_folders.h"

#include <sys/stat.h>
#include <unistd.h>

#include <tuple>

#include "files/output_dirs.h"
#include "files/run_marker.h"
#include "files/unique_fd.h"

namespace chakrashim::bridge {

namespace {

// A name that is there, whatever it is (a dangling link too), never
// followed at its last component.
bool path_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

files::Folder host_folder(const files::Layout& l) { return {l.host_fd ? l.host_fd->get() : -1, l.host_dir}; }

files::Folder device_folder(const files::Layout& l) {
  return {l.device_fd ? l.device_fd->get() : -1, l.device_dir};
}

std::optional<files::Layout> choose_folders(const chakrashim_capture_config& c,
                                            std::string& error) {
  files::LayoutRequest request;
  request.root = c.trace_dir;
  request.job_id = c.job_id;
  request.rank = c.rank;
  request.restart_count = c.restart_count;
  request.gzip = c.gzip != 0;
  request.overwrite = c.overwrite != 0;
  request.run_id = c.run_id ? c.run_id : "";
  const auto other_run = [&](const std::string& dir) {
    return files::other_runs_folder(files::read_folder_run(dir), request.run_id);
  };
  auto layout = files::choose_layout(request, path_exists, files::output_dir_refusal, other_run);
  if (!layout) error = "no free output folder index under " + request.root;
  return layout;
}

bool make_folders(files::Layout& layout, bool host, bool device, std::string& error) {
  // The trace folder is the user's choice, links and all; the folders in
  // it are ours (output_dirs.h).
  if (auto root = files::make_dirs(layout.host_dir.substr(0, layout.host_dir.rfind('/'))); !root.ok) {
    error = root.error;
    return false;
  }
  for (const auto& [wanted, dir, fd] : {std::tuple{host, &layout.host_dir, &layout.host_fd},
                                        std::tuple{device, &layout.device_dir, &layout.device_fd}}) {
    if (!wanted) continue;
    if (*fd) continue;  // opened already (claimed again after a failed claim)
    auto opened = files::open_output_dir(*dir, error);
    if (!opened) return false;
    // Marked as this run's before any rank of it writes there (run_marker.h);
    // a run with no id leaves no mark, and passes marked folders by.
    if (!layout.run_id.empty()) {
      const auto marked = files::mark_folder_run(opened->get(), *dir, layout.run_id, layout.overwrite);
      if (!marked.ok) {
        error = marked.error;
        return false;
      }
      layout.replaced_files += marked.removed;
    }
    *fd = std::move(opened);
  }
  return true;
}

std::optional<files::Layout> prepare_folders(const chakrashim_capture_config& c, bool host,
                                             bool device, std::string& error) {
  auto layout = choose_folders(c, error);
  if (layout && !make_folders(*layout, host, device, error)) return std::nullopt;
  return layout;
}

bool claim_outputs(files::Layout& layout, bool host, bool device, bool overwrite,
                   std::string& error) {
  const auto claim = [&](const files::Folder& dir, const std::string& path, std::shared_ptr<files::UniqueFd>& held) {
    const std::string partial = files::partial_path(base_name(path));
    if (overwrite) ::unlinkat(dir.fd, partial.c_str(), 0);
    files::UniqueFd fd;
    auto claimed = files::claim_partial_at(dir, partial, &fd);
    if (!claimed.ok) error = claimed.error;
    else held = std::make_shared<files::UniqueFd>(std::move(fd));
    return claimed.ok;
  };
  if (host && !claim(host_folder(layout), layout.host_path, layout.host_claim)) return false;
  if (device && !claim(device_folder(layout), layout.device_path, layout.device_claim)) {
    if (host) ::unlinkat(host_folder(layout).fd, files::partial_path(base_name(layout.host_path)).c_str(), 0);
    return false;
  }
  return true;
}

std::optional<files::Layout> prepare_outputs(const chakrashim_capture_config& c, bool host,
                                             bool device, std::string& error) {
  auto layout = prepare_folders(c, host, device, error);
  if (!layout || !claim_outputs(*layout, host, device, c.overwrite != 0, error)) return std::nullopt;
  return layout;
}

std::string host_partial_through(const files::Layout& layout) {
  return files::path_through(host_folder(layout), files::partial_path(base_name(layout.host_path)));
}

void discard_outputs(const files::Layout& layout, bool host, bool device) {
  // rmdir fails, harmlessly, unless the folder is empty (or is not a
  // folder: a link put at its name since).
  if (host) {
    ::unlinkat(host_folder(layout).fd, files::partial_path(base_name(layout.host_path)).c_str(), 0);
    if (layout.host_fd) files::unmark_if_alone(layout.host_fd->get());
    ::rmdir(layout.host_dir.c_str());
  }
  if (device) {
    ::unlinkat(device_folder(layout).fd, files::partial_path(base_name(layout.device_path)).c_str(), 0);
    if (layout.device_fd) files::unmark_if_alone(layout.device_fd->get());
    ::rmdir(layout.device_dir.c_str());
  }
}

}  // namespace chakrashim::bridge
