//! `/proc/interrupts` as read: every IRQ line with its per-CPU counts and placement, and the
//! per-type rows (LOC, RES, CAL, TLB... or arm64's IPIn) with one count per CPU.

use crate::cpulist::CpuList;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interrupts {
    /// CPU ids from the header (online CPUs only).
    pub cpus: Vec<u32>,
    /// Shared (`Arc`), like the per-type rows: a quiet host's table is carried, as last read,
    /// to the samples between its reads (`source::irq_turns`), and a copy of ~20 lines and
    /// ~20 rows was ~300 allocations a sample. Read-only once parsed.
    pub irqs: Arc<Vec<IrqLine>>,
    /// Per-architecture rows (`LOC`, `RES`, `NMI`...) as totals over all CPUs, `ERR` and `MIS`
    /// (one system-wide count) included.
    #[serde(default)]
    pub arch_totals: Arc<Vec<(String, u64)>>,
    /// The per-architecture rows that have one count per CPU, in file order. Absent in
    /// recordings made before perftop kept them (per-type rates are then unknown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arch_rows: Arc<Vec<ArchRow>>,
    /// Set when this table's rates do not run from the previous sample's table: read in turns
    /// on a quiet host (`source::irq_turns`), or read again after a gap. `None`: read this
    /// sample, and the previous sample read it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Box<IrqTurn>>,
}

/// When an interrupt table was read and the read before it: its rates run between the two.
pub type IrqTurn = super::Turn<Interrupts>;

/// One per-type row of `/proc/interrupts`: `CAL:  12  34  Function call interrupts` (x86),
/// `IPI1:  12  34  Function call interrupts` (arm64, riscv). Counts are 32-bit per CPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ArchRow {
    /// The kernel's short name before the colon (`LOC`, `CAL`, `IPI1`).
    pub name: String,
    /// What the kernel says it counts (`Function call interrupts`); empty when it says nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub desc: String,
    /// One count per CPU column of the header, in the header's order (`Interrupts::cpus`).
    pub counts: Vec<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IrqLine {
    pub irq: u32,
    /// Action names, as printed (may hold spaces and `, `-joined shared handlers). Shared
    /// with the derived lines, which every sample copies them into.
    pub name: Arc<str>,
    pub chip: Arc<str>,
    /// Non-zero per-CPU counts as (cpu id, count); most IRQs land on one or two CPUs.
    pub counts: Vec<(u32, u64)>,
    pub affinity: Option<CpuList>,
    pub effective_affinity: Option<CpuList>,
    pub node: Option<i32>,
}
