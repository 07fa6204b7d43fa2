//! A loop device that has never done I/O, made for a test when the host has none: every loop
//! device a booted VM has was probed or used (this VM's loop0-7 all read since boot), so
//! `a_never_used_loop_devices_settings_are_read_on_its_first_io` skipped on every run. A new
//! one is added through `/dev/loop-control` (LOOP_CTL_ADD; python3's `fcntl.ioctl`, as this
//! suite may not use `unsafe`) and removed (LOOP_CTL_REMOVE) when dropped.

use std::process::Command;

const LOOP_CTL_ADD: u32 = 0x4C80;
const LOOP_CTL_REMOVE: u32 = 0x4C81;

/// A loop device this test added; removed on drop (after the test detached it).
pub struct Added(pub u32);

fn control(op: u32, n: u32) -> Result<(), String> {
    let script = format!(
        "import fcntl, os\nfd = os.open('/dev/loop-control', os.O_RDWR)\nfcntl.ioctl(fd, {op}, {n})\n"
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
    }
}

/// `loopN` added for the test: the first N from 64 up that the kernel does not have.
pub fn add() -> Result<(String, Added), String> {
    let n = (64..256)
        .find(|n| !std::path::Path::new(&format!("/sys/block/loop{n}")).exists())
        .ok_or("no free loop index under 256")?;
    control(LOOP_CTL_ADD, n)?;
    // devtmpfs makes the node; wait for it (no udev here to do more).
    let dev = format!("/dev/loop{n}");
    let made = super::live::wait_until(std::time::Duration::from_secs(5), || {
        std::path::Path::new(&dev).exists()
    });
    if !made {
        let _ = control(LOOP_CTL_REMOVE, n);
        return Err(format!("{dev} did not appear"));
    }
    Ok((format!("loop{n}"), Added(n)))
}

impl Drop for Added {
    fn drop(&mut self) {
        let _ = control(LOOP_CTL_REMOVE, self.0);
    }
}
