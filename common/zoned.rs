// SPDX-License-Identifier: GPL-2.0

//! Zoned devices (`zoned=1`) as C null_blk emulates them
//! (drivers/block/null_blk/zoned.c): the zone layout from the parameters
//! ([`ZonedConfig::layout`]), each zone's type, condition and write pointer,
//! and what writes, zone appends and zone management commands do to them
//! ([`Zones`]), with the ZBC/ZNS open and active zone limits.
//!
//! Pure logic on plain data: the caller serialises calls (one lock per
//! device) and moves data itself. No kernel dependencies: the host unit
//! tests compile this file.

/// Sectors per MiB.
const SECTORS_PER_MB: u64 = (1 << 20) / 512;
/// Bytes per sector.
const SECTOR_SIZE: u64 = 512;

/// The zoned parameters of a device, as C null_blk's (sizes in MiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZonedConfig {
    /// `zone_size`: a power of two, in MiB (C's default: 256).
    pub zone_size_mb: u64,
    /// `zone_capacity`: in MiB, at most `zone_size`; 0 is `zone_size`.
    pub zone_capacity_mb: u64,
    /// `zone_nr_conv`: conventional zones at the start.
    pub nr_conv: u32,
    /// `zone_max_open`: 0 for no limit.
    pub max_open: u32,
    /// `zone_max_active`: 0 for no limit.
    pub max_active: u32,
    /// `zone_append_max_sectors`: the largest zone append; 0 makes the
    /// block layer emulate zone appends with writes.
    pub append_max_sectors: u32,
    /// `zone_full`: sequential zones start full.
    pub full: bool,
}

impl Default for ZonedConfig {
    /// C null_blk's defaults.
    fn default() -> Self {
        Self {
            zone_size_mb: 256,
            zone_capacity_mb: 0,
            nr_conv: 0,
            max_open: 0,
            max_active: 0,
            append_max_sectors: u32::MAX,
            full: false,
        }
    }
}

/// Why a zoned configuration is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// `zone_size` is 0 or not a power of two.
    ZoneSize,
    /// `zone_size` is larger than the device.
    ZoneSizeOverCapacity,
    /// `zone_capacity` is larger than `zone_size`.
    ZoneCapacity,
    /// A smaller zone capacity with a smaller last zone.
    SmallLastZone,
    /// `zone_nr_conv` leaves no sequential zone.
    NrConv,
    /// `zone_max_open` is larger than `zone_max_active`.
    MaxOpen,
}

impl LayoutError {
    /// The parameter at fault and what it must be.
    pub fn explain(self) -> (&'static str, &'static str) {
        match self {
            Self::ZoneSize => ("zone_size", "a non-zero power of two (MiB)"),
            Self::ZoneSizeOverCapacity => ("zone_size", "at most the device size"),
            Self::ZoneCapacity => ("zone_capacity", "at most zone_size"),
            Self::SmallLastZone => (
                "zone_capacity",
                "zone_size when the size is not a multiple of zone_size",
            ),
            Self::NrConv => ("zone_nr_conv", "below the number of zones"),
            Self::MaxOpen => ("zone_max_open", "at most zone_max_active"),
        }
    }
}

/// The zone geometry of a device, and the limits it reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Sectors per zone (a power of two), the queue's `chunk_sectors`.
    pub zone_sectors: u64,
    /// Writable sectors of a sequential zone.
    pub capacity_sectors: u64,
    /// The device's sectors.
    pub device_sectors: u64,
    /// All zones (the last may be smaller).
    pub nr_zones: u32,
    /// Conventional zones, the first ones.
    pub nr_conv: u32,
    /// Open zone limit, 0 for none.
    pub max_open: u32,
    /// Active zone limit, 0 for none.
    pub max_active: u32,
    /// Largest zone append in sectors, 0 for emulated appends.
    pub append_max_sectors: u32,
    /// Sequential zones start full.
    pub full: bool,
}

impl ZonedConfig {
    /// The layout of a device of `device_sectors` sectors with blocks of
    /// `block_size` bytes.
    ///
    /// Unlike C null_blk, which lowers a too large `zone_nr_conv` and turns
    /// off too large limits with a message, a `zone_nr_conv` that leaves no
    /// sequential zone and a `zone_max_open` above `zone_max_active` are
    /// refused; limits at or above the number of sequential zones mean no
    /// limit, as they would enforce nothing (C does the same).
    pub fn layout(&self, device_sectors: u64, block_size: u32) -> Result<Layout, LayoutError> {
        if self.zone_size_mb == 0 || !self.zone_size_mb.is_power_of_two() {
            return Err(LayoutError::ZoneSize);
        }
        let zone_sectors = self
            .zone_size_mb
            .checked_mul(SECTORS_PER_MB)
            .ok_or(LayoutError::ZoneSize)?;
        if zone_sectors > device_sectors {
            return Err(LayoutError::ZoneSizeOverCapacity);
        }
        let capacity_mb = if self.zone_capacity_mb == 0 {
            self.zone_size_mb
        } else {
            self.zone_capacity_mb
        };
        if capacity_mb > self.zone_size_mb {
            return Err(LayoutError::ZoneCapacity);
        }
        if capacity_mb != self.zone_size_mb && device_sectors % zone_sectors != 0 {
            return Err(LayoutError::SmallLastZone);
        }
        let nr_zones = device_sectors.div_ceil(zone_sectors);
        let nr_zones = u32::try_from(nr_zones).map_err(|_| LayoutError::ZoneSize)?;
        if self.nr_conv >= nr_zones {
            return Err(LayoutError::NrConv);
        }
        let nr_seq = nr_zones - self.nr_conv;
        let max_active = if self.max_active >= nr_seq {
            0
        } else {
            self.max_active
        };
        if max_active != 0 && self.max_open > max_active {
            return Err(LayoutError::MaxOpen);
        }
        let max_open = if self.max_open >= nr_seq {
            0
        } else {
            self.max_open
        };
        let capacity_sectors = capacity_mb * SECTORS_PER_MB;
        let block_sectors = (block_size / 512).max(1);
        let append_max_sectors = (self.append_max_sectors / block_sectors * block_sectors)
            .min(u32::try_from(capacity_sectors).unwrap_or(u32::MAX));
        Ok(Layout {
            zone_sectors,
            capacity_sectors,
            device_sectors,
            nr_zones,
            nr_conv: self.nr_conv,
            max_open,
            max_active,
            append_max_sectors,
            full: self.full,
        })
    }
}

/// The type of a zone (`BLK_ZONE_TYPE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneType {
    /// Written anywhere, no write pointer.
    Conventional,
    /// Written sequentially at the write pointer.
    SeqWriteRequired,
}

/// The condition of a zone (`BLK_ZONE_COND_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// A conventional zone.
    NotWp,
    /// Nothing written.
    Empty,
    /// Opened by a write.
    ImpOpen,
    /// Opened by a zone open command.
    ExpOpen,
    /// Written, not open.
    Closed,
    /// No more writes.
    Full,
    /// Read-only.
    ReadOnly,
    /// Neither read nor written.
    Offline,
}

/// One zone, as reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    /// First sector.
    pub start: u64,
    /// Sectors.
    pub len: u64,
    /// Writable sectors.
    pub capacity: u64,
    /// Write pointer; `u64::MAX` for read-only and offline zones.
    pub wp: u64,
    /// Type.
    pub kind: ZoneType,
    /// Condition.
    pub cond: Cond,
}

impl Zone {
    /// How many of the `len` bytes read from byte `pos` of the device (in
    /// this zone) hold data, as C null_blk's `null_zone_valid_read_len()`:
    /// all of them in a conventional zone, in a read-only zone (which has
    /// no write pointer) and in a finished zone (write pointer at its end);
    /// in any other sequential zone, those before the write pointer, none
    /// from it on. A memory-backed disk reads the rest as 0xFF bytes.
    ///
    /// Counted to the byte. C asks for each segment of a read and counts
    /// whole sectors from the one the segment starts in, so for a segment
    /// that starts inside a sector (direct I/O from 2-byte aligned buffers,
    /// a sector straddling two segments) it may take as many bytes past
    /// the write pointer as data as the segment's offset in that sector;
    /// here they are past it, like the others.
    pub fn valid_read_len(&self, pos: u64, len: u64) -> u64 {
        if self.kind == ZoneType::Conventional {
            return len;
        }
        // `INVALID_WP` (read-only, offline) saturates: all of them.
        self.wp
            .saturating_mul(SECTOR_SIZE)
            .saturating_sub(pos)
            .min(len)
    }
}

/// Why a command failed (the block layer status it maps to).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneError {
    /// `BLK_STS_IOERR`: not allowed in this zone's condition or place.
    Io,
    /// `BLK_STS_ZONE_OPEN_RESOURCE`: too many open zones.
    OpenResource,
    /// `BLK_STS_ZONE_ACTIVE_RESOURCE`: too many active zones.
    ActiveResource,
}

/// A zone management command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mgmt {
    /// `REQ_OP_ZONE_RESET`.
    Reset,
    /// `REQ_OP_ZONE_RESET_ALL`.
    ResetAll,
    /// `REQ_OP_ZONE_OPEN`.
    Open,
    /// `REQ_OP_ZONE_CLOSE`.
    Close,
    /// `REQ_OP_ZONE_FINISH`.
    Finish,
}

/// Write pointer of read-only and offline zones.
pub const INVALID_WP: u64 = u64::MAX;

/// The zones of a device and the open/active counts.
#[derive(Debug)]
pub struct Zones<V> {
    layout: Layout,
    zones: V,
    imp_open: u32,
    exp_open: u32,
    closed: u32,
    /// Where the search for an implicitly open zone to close resumes.
    imp_close_next: u32,
}

/// The zones live in `V`: a `Vec` on the host, a `KVec` in the kernel.
impl<V: core::ops::DerefMut<Target = [Zone]>> Zones<V> {
    /// Zones for `layout`, in `zones`, which must hold `layout.nr_zones`
    /// entries (any values: they are set here).
    pub fn new(layout: Layout, mut zones: V) -> Self {
        let mut start = 0;
        for (i, zone) in zones.iter_mut().enumerate() {
            let len = layout.zone_sectors.min(layout.device_sectors - start);
            *zone = if (i as u32) < layout.nr_conv {
                Zone {
                    start,
                    len,
                    capacity: len,
                    wp: start + len,
                    kind: ZoneType::Conventional,
                    cond: Cond::NotWp,
                }
            } else {
                let capacity = len.min(layout.capacity_sectors);
                Zone {
                    start,
                    len,
                    capacity,
                    wp: if layout.full { start + capacity } else { start },
                    kind: ZoneType::SeqWriteRequired,
                    cond: if layout.full { Cond::Full } else { Cond::Empty },
                }
            };
            start += layout.zone_sectors;
        }
        Self {
            layout,
            zones,
            imp_open: 0,
            exp_open: 0,
            closed: 0,
            imp_close_next: layout.nr_conv,
        }
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The zone number of `sector`: a shift, as C's `null_zone_no()`, since
    /// [`ZonedConfig::layout`] makes the zone size a power of two (and no
    /// division leaves a panic path behind).
    pub fn zone_no(&self, sector: u64) -> usize {
        (sector >> (self.layout.zone_sectors.trailing_zeros() & (u64::BITS - 1))) as usize
    }

    /// The zones from the one holding `sector`, at most `nr`.
    pub fn report(&self, sector: u64, nr: usize) -> &[Zone] {
        let first = self.zone_no(sector).min(self.zones.len());
        let end = first.saturating_add(nr).min(self.zones.len());
        &self.zones[first..end]
    }

    /// How many of the `sectors` from `sector` a read may return data for:
    /// [`Zones::read_len`] in sectors.
    pub fn read(&self, sector: u64, sectors: u64) -> Result<u64, ZoneError> {
        let len = self.read_len(
            sector.saturating_mul(SECTOR_SIZE),
            sectors.saturating_mul(SECTOR_SIZE),
        )?;
        Ok(len / SECTOR_SIZE)
    }

    /// How many of the `len` bytes a read from byte `pos` may return data
    /// for ([`Zone::valid_read_len`] of the zone of `pos`: what lies below
    /// the write pointer of a sequential zone; the rest reads as 0xFF
    /// bytes). `Err` for an offline zone, which cannot be read.
    pub fn read_len(&self, pos: u64, len: u64) -> Result<u64, ZoneError> {
        let zone = self
            .zones
            .get(self.zone_no(pos / SECTOR_SIZE))
            .ok_or(ZoneError::Io)?;
        if zone.cond == Cond::Offline {
            return Err(ZoneError::Io);
        }
        Ok(zone.valid_read_len(pos, len))
    }

    fn need_res_mgmt(&self) -> bool {
        self.layout.max_open != 0 || self.layout.max_active != 0
    }

    fn check_active(&self) -> Result<(), ZoneError> {
        let max = self.layout.max_active;
        if max == 0 || self.exp_open + self.imp_open + self.closed < max {
            return Ok(());
        }
        Err(ZoneError::ActiveResource)
    }

    /// Close the next implicitly open zone, round robin.
    fn close_imp_open_zone(&mut self) {
        let nr_zones = self.layout.nr_zones;
        let nr_conv = self.layout.nr_conv;
        let mut zno = self.imp_close_next;
        if zno >= nr_zones {
            zno = nr_conv;
        }
        for _ in nr_conv..nr_zones {
            let zone = &mut self.zones[zno as usize];
            zno += 1;
            if zno >= nr_zones {
                zno = nr_conv;
            }
            if zone.cond == Cond::ImpOpen {
                self.imp_open -= 1;
                if zone.wp == zone.start {
                    zone.cond = Cond::Empty;
                } else {
                    zone.cond = Cond::Closed;
                    self.closed += 1;
                }
                self.imp_close_next = zno;
                return;
            }
        }
    }

    fn check_open(&mut self) -> Result<(), ZoneError> {
        let max = self.layout.max_open;
        if max == 0 || self.exp_open + self.imp_open < max {
            return Ok(());
        }
        if self.imp_open > 0 && self.check_active().is_ok() {
            self.close_imp_open_zone();
            return Ok(());
        }
        Err(ZoneError::OpenResource)
    }

    /// Whether zone `zno`, empty or closed, may become open.
    fn check_resources(&mut self, zno: usize) -> Result<(), ZoneError> {
        match self.zones[zno].cond {
            Cond::Empty => {
                self.check_active()?;
                self.check_open()
            }
            Cond::Closed => self.check_open(),
            _ => Err(ZoneError::Io),
        }
    }

    /// A write of `sectors` at `sector`, or a zone append (`append`) to the
    /// zone of `sector`: [`Zones::start_write`] then [`Zones::finish_write`].
    pub fn write(&mut self, sector: u64, sectors: u64, append: bool) -> Result<u64, ZoneError> {
        let at = self.start_write(sector, sectors, append)?;
        self.finish_write(at, sectors);
        Ok(at)
    }

    /// Check a write of `sectors` at `sector`, or a zone append (`append`)
    /// to the zone of `sector`, and open its zone. Returns the sector to
    /// write at (the write pointer for an append). The caller then moves
    /// the data and, if that worked, calls [`Zones::finish_write`] before
    /// anything else; if it did not, the write pointer stays where it was
    /// (the zone stays open, as in C null_blk).
    pub fn start_write(
        &mut self,
        sector: u64,
        sectors: u64,
        append: bool,
    ) -> Result<u64, ZoneError> {
        let zno = self.zone_no(sector);
        let zone = *self.zones.get(zno).ok_or(ZoneError::Io)?;
        if zone.kind == ZoneType::Conventional {
            return if append {
                Err(ZoneError::Io)
            } else {
                Ok(sector)
            };
        }
        // FULL, READONLY and OFFLINE zones fail the write pointer check.
        let sector = if append {
            if self.layout.append_max_sectors == 0 || zone.wp == INVALID_WP {
                return Err(ZoneError::Io);
            }
            zone.wp
        } else {
            sector
        };
        if sector != zone.wp || zone.wp + sectors > zone.start + zone.capacity {
            return Err(ZoneError::Io);
        }
        if matches!(zone.cond, Cond::Closed | Cond::Empty) {
            if self.need_res_mgmt() {
                self.check_resources(zno)?;
                if self.zones[zno].cond == Cond::Closed {
                    self.closed -= 1;
                }
                self.imp_open += 1;
            }
            self.zones[zno].cond = Cond::ImpOpen;
        }
        Ok(sector)
    }

    /// Move the write pointer past `sectors` written at `sector`, as
    /// [`Zones::start_write`] allowed; a zone written to its capacity is
    /// full.
    pub fn finish_write(&mut self, sector: u64, sectors: u64) {
        let zno = self.zone_no(sector);
        let need_res_mgmt = self.need_res_mgmt();
        let Some(zone) = self.zones.get_mut(zno) else {
            return;
        };
        if zone.kind == ZoneType::Conventional || zone.wp != sector {
            return;
        }
        zone.wp += sectors;
        if zone.wp == zone.start + zone.capacity {
            if need_res_mgmt {
                match zone.cond {
                    Cond::ExpOpen => self.exp_open -= 1,
                    Cond::ImpOpen => self.imp_open -= 1,
                    _ => {}
                }
            }
            zone.cond = Cond::Full;
        }
    }

    /// Zone `zno`, if there is one.
    pub fn zone(&self, zno: usize) -> Option<Zone> {
        self.zones.get(zno).copied()
    }

    fn open(&mut self, zno: usize) -> Result<(), ZoneError> {
        match self.zones[zno].cond {
            Cond::ExpOpen => return Ok(()),
            Cond::Empty | Cond::ImpOpen | Cond::Closed => {}
            _ => return Err(ZoneError::Io),
        }
        if self.need_res_mgmt() {
            match self.zones[zno].cond {
                Cond::Empty => self.check_resources(zno)?,
                Cond::ImpOpen => self.imp_open -= 1,
                Cond::Closed => {
                    self.check_resources(zno)?;
                    self.closed -= 1;
                }
                _ => {}
            }
            self.exp_open += 1;
        }
        self.zones[zno].cond = Cond::ExpOpen;
        Ok(())
    }

    fn close(&mut self, zno: usize) -> Result<(), ZoneError> {
        match self.zones[zno].cond {
            Cond::Closed => return Ok(()),
            Cond::ImpOpen | Cond::ExpOpen => {}
            _ => return Err(ZoneError::Io),
        }
        let zone = self.zones[zno];
        if self.need_res_mgmt() {
            match zone.cond {
                Cond::ImpOpen => self.imp_open -= 1,
                Cond::ExpOpen => self.exp_open -= 1,
                _ => {}
            }
            if zone.wp > zone.start {
                self.closed += 1;
            }
        }
        self.zones[zno].cond = if zone.wp == zone.start {
            Cond::Empty
        } else {
            Cond::Closed
        };
        Ok(())
    }

    fn finish(&mut self, zno: usize) -> Result<(), ZoneError> {
        if self.need_res_mgmt() {
            match self.zones[zno].cond {
                Cond::Full => return Ok(()),
                Cond::Empty => self.check_resources(zno)?,
                Cond::ImpOpen => self.imp_open -= 1,
                Cond::ExpOpen => self.exp_open -= 1,
                Cond::Closed => {
                    self.check_resources(zno)?;
                    self.closed -= 1;
                }
                _ => return Err(ZoneError::Io),
            }
        }
        let zone = &mut self.zones[zno];
        zone.cond = Cond::Full;
        zone.wp = zone.start + zone.len;
        Ok(())
    }

    fn reset(&mut self, zno: usize) -> Result<(), ZoneError> {
        if self.need_res_mgmt() {
            match self.zones[zno].cond {
                Cond::ImpOpen => self.imp_open -= 1,
                Cond::ExpOpen => self.exp_open -= 1,
                Cond::Closed => self.closed -= 1,
                Cond::Empty | Cond::Full => {}
                _ => return Err(ZoneError::Io),
            }
        }
        let zone = &mut self.zones[zno];
        zone.cond = Cond::Empty;
        zone.wp = zone.start;
        Ok(())
    }

    /// A zone management command on the zone of `sector` (all sequential
    /// zones for [`Mgmt::ResetAll`]). Calls `discard(start, sectors)` for
    /// every zone reset, so that a memory-backed device drops its data.
    pub fn mgmt(
        &mut self,
        op: Mgmt,
        sector: u64,
        mut discard: impl FnMut(u64, u64),
    ) -> Result<(), ZoneError> {
        if op == Mgmt::ResetAll {
            for zno in self.layout.nr_conv as usize..self.zones.len() {
                let zone = self.zones[zno];
                if !matches!(zone.cond, Cond::Empty | Cond::ReadOnly | Cond::Offline) {
                    self.reset(zno)?;
                    discard(zone.start, zone.len);
                }
            }
            return Ok(());
        }
        let zno = self.zone_no(sector);
        let zone = *self.zones.get(zno).ok_or(ZoneError::Io)?;
        if zone.kind == ZoneType::Conventional
            || matches!(zone.cond, Cond::ReadOnly | Cond::Offline)
        {
            return Err(ZoneError::Io);
        }
        match op {
            Mgmt::Reset => {
                self.reset(zno)?;
                discard(zone.start, zone.len);
                Ok(())
            }
            Mgmt::Open => self.open(zno),
            Mgmt::Close => self.close(zno),
            Mgmt::Finish => self.finish(zno),
            Mgmt::ResetAll => Ok(()),
        }
    }

    /// Put the zone of `sector` in the read-only or offline condition, or,
    /// if it is in that condition already, back to empty (C null_blk's
    /// configfs `zone_readonly` and `zone_offline`). A zone leaving its
    /// open or closed condition is finished first. Calls `discard` as
    /// [`Zones::mgmt`] for a zone that becomes empty.
    pub fn set_cond(
        &mut self,
        sector: u64,
        cond: Cond,
        mut discard: impl FnMut(u64, u64),
    ) -> Result<(), ZoneError> {
        if !matches!(cond, Cond::ReadOnly | Cond::Offline) {
            return Err(ZoneError::Io);
        }
        let zno = self.zone_no(sector);
        let zone = *self.zones.get(zno).ok_or(ZoneError::Io)?;
        if zone.kind == ZoneType::Conventional {
            return Err(ZoneError::Io);
        }
        if zone.cond == cond {
            let zone = &mut self.zones[zno];
            zone.cond = Cond::Empty;
            zone.wp = zone.start;
            discard(zone.start, zone.len);
            return Ok(());
        }
        if !matches!(zone.cond, Cond::ReadOnly | Cond::Offline) {
            // Frees the zone's open/active resources; cannot fail here,
            // and a zone it cannot finish (no resources) is set all the same.
            let _ = self.finish(zno);
        }
        let zone = &mut self.zones[zno];
        zone.cond = cond;
        zone.wp = INVALID_WP;
        Ok(())
    }

    /// (imp_open, exp_open, closed), for tests.
    pub fn counts(&self) -> (u32, u32, u32) {
        (self.imp_open, self.exp_open, self.closed)
    }
}
