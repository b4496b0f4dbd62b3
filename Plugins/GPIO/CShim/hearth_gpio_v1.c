// libgpiod v1 (1.5/1.6: Debian 12, Raspberry Pi OS Bookworm) backend of hearth_gpio.h.
#include "hearth_gpio.h"

#include <errno.h>
#include <fcntl.h>
#include <gpiod.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

struct hg_chip {
    struct gpiod_chip *chip;
};

struct hg_line {
    struct gpiod_line *line;
    int is_input;
};

const char *hg_backend_description(void) {
    static char description[64];
    if (!description[0]) snprintf(description, sizeof description, "libgpiod %s (v1 uAPI)", gpiod_version_string());
    return description;
}

int hg_backend_has_kernel_debounce(void) { return 0; }

static int saved_errno(void) { return errno > 0 ? errno : EIO; }

hg_chip *hg_chip_open(const char *spec, int *error) {
    struct gpiod_chip *chip = NULL;
    int first = 0;
    errno = 0;
    if (spec[0] == '/') {
        chip = gpiod_chip_open(spec);
        if (!chip) first = saved_errno();
    } else {
        // by name first (/dev/<name>): its errno tells a permission problem from a missing chip;
        // then by label or number
        chip = gpiod_chip_open_by_name(spec);
        if (!chip) {
            first = saved_errno();
            errno = 0;
            chip = gpiod_chip_open_lookup(spec);
        }
    }
    if (!chip) {
        *error = (first == EACCES || first == EPERM || first == ENOTTY || first == ENODEV) ? first : ENOENT;
        return NULL;
    }
    hg_chip *result = calloc(1, sizeof *result);
    if (!result) {
        gpiod_chip_close(chip);
        *error = ENOMEM;
        return NULL;
    }
    result->chip = chip;
    return result;
}

void hg_chip_close(hg_chip *chip) {
    if (!chip) return;
    gpiod_chip_close(chip->chip);
    free(chip);
}

const char *hg_chip_name(hg_chip *chip) { return gpiod_chip_name(chip->chip); }
const char *hg_chip_label(hg_chip *chip) { return gpiod_chip_label(chip->chip); }
unsigned int hg_chip_num_lines(hg_chip *chip) { return gpiod_chip_num_lines(chip->chip); }

int hg_chip_find_line(hg_chip *chip, const char *name) {
    errno = 0;
    struct gpiod_line *line = gpiod_chip_find_line(chip->chip, name);
    if (!line) return errno > 0 ? -errno : -ENOENT;
    return (int)gpiod_line_offset(line);
}

int hg_chip_line_consumer(hg_chip *chip, unsigned int offset, char *buffer, size_t size) {
    if (size > 0) buffer[0] = 0;
    struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offset);
    if (!line) return -saved_errno();
    if (gpiod_line_update(line) < 0) return -saved_errno();
    const char *consumer = gpiod_line_consumer(line);
    if (consumer && size > 0) snprintf(buffer, size, "%s", consumer);
    return gpiod_line_is_used(line) ? 1 : 0;
}

static int bias_flags(int bias) {
    switch (bias) {
    case HG_BIAS_DISABLED: return GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE;
    case HG_BIAS_PULL_UP: return GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP;
    case HG_BIAS_PULL_DOWN: return GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN;
    default: return 0;
    }
}

static hg_line *wrap(struct gpiod_line *line, int is_input, int *error) {
    hg_line *result = calloc(1, sizeof *result);
    if (!result) {
        gpiod_line_release(line);
        *error = ENOMEM;
        return NULL;
    }
    result->line = line;
    result->is_input = is_input;
    return result;
}

hg_line *hg_line_request_input(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int bias,
                               unsigned int debounce_us, int *error) {
    (void)debounce_us;  // the v1 uAPI has no debounce: the plugin debounces in software
    errno = 0;
    struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offset);
    if (!line) {
        *error = saved_errno();
        return NULL;
    }
    struct gpiod_line_request_config config = {
        .consumer = consumer,
        .request_type = GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES,
        .flags = (active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0) | bias_flags(bias),
    };
    if (gpiod_line_request(line, &config, 0) < 0) {
        *error = saved_errno();
        return NULL;
    }
    // Event reads must never block the poll loop.
    int fd = gpiod_line_event_get_fd(line);
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return wrap(line, 1, error);
}

hg_line *hg_line_request_output(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int value,
                                int *error) {
    errno = 0;
    struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offset);
    if (!line) {
        *error = saved_errno();
        return NULL;
    }
    struct gpiod_line_request_config config = {
        .consumer = consumer,
        .request_type = GPIOD_LINE_REQUEST_DIRECTION_OUTPUT,
        .flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0,
    };
    if (gpiod_line_request(line, &config, value ? 1 : 0) < 0) {
        *error = saved_errno();
        return NULL;
    }
    return wrap(line, 0, error);
}

int hg_line_get_value(hg_line *line) {
    errno = 0;
    int value = gpiod_line_get_value(line->line);
    return value < 0 ? -saved_errno() : value;
}

int hg_line_set_value(hg_line *line, int value) {
    errno = 0;
    return gpiod_line_set_value(line->line, value ? 1 : 0) < 0 ? -saved_errno() : 0;
}

int hg_line_event_fd(hg_line *line) { return line->is_input ? gpiod_line_event_get_fd(line->line) : -1; }

int hg_line_read_events(hg_line *line, hg_event *events, unsigned int max) {
    if (!line->is_input || max == 0) return 0;
    int fd = gpiod_line_event_get_fd(line->line);
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLPRI};
    if (poll(&p, 1, 0) <= 0) return 0;
    struct gpiod_line_event buffer[16];
    if (max > 16) max = 16;
    errno = 0;
    int n = gpiod_line_event_read_fd_multiple(fd, buffer, max);
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -saved_errno();
    for (int i = 0; i < n; i++) {
        events[i].timestamp_ns = (uint64_t)buffer[i].ts.tv_sec * 1000000000ull + (uint64_t)buffer[i].ts.tv_nsec;
        events[i].rising = buffer[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
    }
    return n;
}

void hg_line_release(hg_line *line) {
    if (!line) return;
    gpiod_line_release(line->line);
    free(line);
}

int hg_wake_fd(void) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}
