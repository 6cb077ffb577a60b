#include "config_watcher.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <cstring>

namespace moat::app {

ConfigWatcher::ConfigWatcher(asio::io_context& io, std::function<void()> changed)
    : changed_(std::move(changed)), descriptor_(io), quiet_(io) {}

ConfigWatcher::~ConfigWatcher() {
    try {
        stop();
    } catch (const std::exception&) {  // closing a descriptor: nothing left to do about it
    }
}

bool ConfigWatcher::watch(const std::filesystem::path& file) {
    const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
    if (::inotify_add_watch(fd, dir.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0) {
        ::close(fd);
        return false;
    }
    name_ = file.filename().string();
    descriptor_.assign(fd);
    read();
    return true;
}

void ConfigWatcher::stop() {
    std::error_code ignored;
    quiet_.cancel();
    descriptor_.close(ignored);
}

void ConfigWatcher::read() {
    descriptor_.async_read_some(
        asio::buffer(events_), [this](const std::error_code& ec, std::size_t n) {
            if (ec) {
                return;  // closed (stop) or broken: SIGHUP still reloads
            }
            bool ours = false;
            std::size_t at = 0;
            while (at + sizeof(inotify_event) <= n) {
                inotify_event event{};
                std::memcpy(&event, events_.data() + at, sizeof(event));
                const char* name = events_.data() + at + sizeof(inotify_event);
                if (event.len > 0 && name_ == std::string_view(name, ::strnlen(name, event.len))) {
                    ours = true;
                }
                at += sizeof(inotify_event) + event.len;
            }
            if (ours) {
                quiet_.expires_after(kQuiet);  // restarts the wait on every new write
                quiet_.async_wait([this](const std::error_code& e) {
                    if (!e) {
                        changed_();
                    }
                });
            }
            read();
        });
}

}  // namespace moat::app
