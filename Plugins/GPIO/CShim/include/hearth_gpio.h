// The narrow C interface Hearth's GPIO plugin uses to reach the kernel's GPIO character
// device. The shim links no libgpiod: on first use it dlopen()s libgpiod 2 (`libgpiod.so.3`,
// Debian 13 / Raspberry Pi OS Trixie) or else libgpiod 1.6 (`libgpiod.so.2`, Debian 12 /
// Bookworm) and dispatches to the matching backend (hearth_gpio_v2.c, hearth_gpio_v1.c), so one
// build runs on both. HEARTH_LIBGPIOD names the library to load instead (a soname or a path).
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

/// A change of a watched line's status, seen by the kernel (another process requested or
/// released it, or changed its configuration).
typedef struct hg_info_event {
    unsigned int offset;
    /// HG_INFO_REQUESTED, HG_INFO_RELEASED or HG_INFO_RECONFIGURED.
    int type;
    /// Kernel timestamp, nanoseconds of CLOCK_MONOTONIC.
    uint64_t timestamp_ns;
    /// The line's consumer after the change (empty when released).
    char consumer[64];
} hg_info_event;

enum {
    HG_INFO_REQUESTED = 1,
    HG_INFO_RELEASED = 2,
    HG_INFO_RECONFIGURED = 3,
};

/// Loads libgpiod (once; later calls return the first result): 2 for the v2 API, 1 for v1,
/// or 0 when neither library could be loaded (hg_backend_description() then says why).
int hg_backend_load(void);
/// Which backend this is, e.g. "libgpiod 2.2.1 (v2 API, libgpiod.so.3)", or why there is none.
const char *hg_backend_description(void);
/// The library's own version string ("1.6.3", "2.2.1"), empty when none is loaded.
const char *hg_backend_version(void);
/// The file the library was loaded from (from dladdr), empty when none is loaded.
const char *hg_backend_path(void);
/// Whether this backend can ask the kernel to debounce inputs.
int hg_backend_has_kernel_debounce(void);

/// Opens a chip by name (gpiochip0), label (pinctrl-rp1), path (/dev/gpiochip0) or number.
/// Without a library *error is ELIBACC.
hg_chip *hg_chip_open(const char *spec, int *error);
void hg_chip_close(hg_chip *chip);
const char *hg_chip_name(hg_chip *chip);
const char *hg_chip_label(hg_chip *chip);
unsigned int hg_chip_num_lines(hg_chip *chip);
/// The offset of the line with this name, or -ENOENT.
int hg_chip_find_line(hg_chip *chip, const char *name);
/// Copies the current consumer of a line (empty when free); returns 1 when in use, 0 free, <0 error.
int hg_chip_line_consumer(hg_chip *chip, unsigned int offset, char *buffer, size_t size);

/// Watches a line's status (requests and releases by anyone, this process included): events
/// arrive on hg_chip_info_fd(). 0 or a negative errno.
int hg_chip_watch_line(hg_chip *chip, unsigned int offset);
/// A file descriptor that becomes readable when watched lines change, or -1 before any watch.
int hg_chip_info_fd(hg_chip *chip);
/// Reads one pending status change without blocking: 1, 0 when none, or a negative errno
/// (-ENODEV: the chip is gone).
int hg_chip_read_info_event(hg_chip *chip, hg_info_event *event);
/// Ends every line-info watch on this chip by closing the descriptor that holds them. Call it
/// before releasing the lines of a chip that is gone: Linux before 6.5 (Debian 12's 6.1)
/// dereferences the removed chip when it tells watchers of a release (a NULL-pointer oops in
/// gpio_desc_to_lineinfo that leaves the releasing thread dead and the chip's notifier locked).
/// hg_chip_name/label/num_lines and hg_chip_close still work; with libgpiod 2 other calls then
/// fail with -ENODEV (with 1.6 they reach the kernel, which says ENODEV for a removed chip).
void hg_chip_unwatch(hg_chip *chip);

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

/// Which GPIO character-device uAPIs the kernel serves on this chip (a path, /dev/gpiochip0):
/// bit 0 the v1 uAPI (Linux 4.8, optional since 5.10), bit 1 the v2 uAPI (Linux >= 5.10,
/// with debounce); or a negative errno when the chip cannot be opened.
int hg_kernel_uapi(const char *chip_path);

/// A non-blocking eventfd to wake a poll() loop (or -errno).
int hg_wake_fd(void);

#endif
