// The narrow C interface Hearth's GPIO plugin uses to reach the kernel's GPIO character
// device. One backend implements it (libgpiod v1 in hearth_gpio_v1.c); a libgpiod v2 backend
// implements the same functions and replaces that file, nothing else changes.
//
// Every function that can fail returns a negative errno (or NULL and sets *error to a
// positive errno), so the Swift side can name the cause: ENOENT (no such chip or line),
// EBUSY (held by another process), EACCES/EPERM (permission), EINVAL (bad offset/flags).
#ifndef HEARTH_GPIO_H
#define HEARTH_GPIO_H

#include <stddef.h>
#include <stdint.h>

typedef struct hg_chip hg_chip;
typedef struct hg_line hg_line;

enum {
    HG_BIAS_AS_IS = 0,
    HG_BIAS_DISABLED = 1,
    HG_BIAS_PULL_UP = 2,
    HG_BIAS_PULL_DOWN = 3,
};

/// One edge as the kernel saw it.
typedef struct hg_event {
    /// Kernel timestamp, nanoseconds of CLOCK_MONOTONIC (Linux >= 5.7 for the v1 uAPI).
    uint64_t timestamp_ns;
    /// 1 for a rising edge of the logical (active-low-corrected) value, 0 for falling.
    int rising;
} hg_event;

/// Which backend this is, e.g. "libgpiod 1.6.3 (v1 uAPI)".
const char *hg_backend_description(void);
/// Whether this backend can ask the kernel to debounce inputs.
int hg_backend_has_kernel_debounce(void);

/// Opens a chip by name (gpiochip0), label (pinctrl-rp1), path (/dev/gpiochip0) or number.
hg_chip *hg_chip_open(const char *spec, int *error);
void hg_chip_close(hg_chip *chip);
const char *hg_chip_name(hg_chip *chip);
const char *hg_chip_label(hg_chip *chip);
unsigned int hg_chip_num_lines(hg_chip *chip);
/// The offset of the line with this name, or -ENOENT.
int hg_chip_find_line(hg_chip *chip, const char *name);
/// Copies the current consumer of a line (empty when free); returns 1 when in use, 0 free, <0 error.
int hg_chip_line_consumer(hg_chip *chip, unsigned int offset, char *buffer, size_t size);

/// Requests a line as an input with edge events on both edges.
/// debounce_us > 0 asks the kernel to debounce where the backend supports it.
hg_line *hg_line_request_input(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int bias,
                               unsigned int debounce_us, int *error);
/// Requests a line as an output driving `value` (logical, active-low applied by the kernel).
hg_line *hg_line_request_output(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int value,
                                int *error);
/// Reads the logical value: 0, 1, or a negative errno.
int hg_line_get_value(hg_line *line);
/// Drives the logical value; 0 or a negative errno.
int hg_line_set_value(hg_line *line, int value);
/// A file descriptor that becomes readable (poll POLLIN) when events are pending, or -1.
int hg_line_event_fd(hg_line *line);
/// Reads up to `max` pending events without blocking; the count, 0 when none, or a negative errno.
int hg_line_read_events(hg_line *line, hg_event *events, unsigned int max);
/// Releases the line (the chip stays open).
void hg_line_release(hg_line *line);

/// A non-blocking eventfd to wake a poll() loop (or -errno).
int hg_wake_fd(void);

#endif
