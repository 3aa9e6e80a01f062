// SPDX-License-Identifier: GPL-2.0

//! `zoned=1`: a host-managed zoned disk, as C null_blk's (zoned.c).
//!
//! The zone states and rules are the pure `common/zoned.rs`; this file
//! applies them to requests under one mutex per device (a zoned device's
//! tag set is `BLOCKING`, so `queue_rq` may sleep on it, and so may the
//! data copy of a memory-backed device, which happens under it as in C):
//! writes and zone appends at the write pointer, zone management commands,
//! reads of offline zones refused, reads past a write pointer filled with
//! 0xFF bytes, and `report_zones`.

use crate::{
    bad_sectors::BadBlockCheck,
    device::{serve_data, NullQueue},
    params::DeviceConfig,
    store::Store,
    zoned::{Cond, Mgmt, Zone, ZoneError, ZoneType, Zones},
};
use kernel::{
    block::{
        mq::{
            zoned::{self as kzoned, ZoneReport, ZonedLimits},
            Command, Request,
        },
        SECTOR_SHIFT,
    },
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// The zones of one device.
#[pin_data]
pub(crate) struct DevZones {
    #[pin]
    zones: Mutex<Zones<KVec<Zone>>>,
}

/// The block layer's error for a zone rule broken.
fn to_error(e: ZoneError) -> Error {
    match e {
        ZoneError::Io => EIO,
        // `BLK_STS_ZONE_OPEN_RESOURCE` and `BLK_STS_ZONE_ACTIVE_RESOURCE`
        ZoneError::OpenResource => ETOOMANYREFS,
        ZoneError::ActiveResource => EOVERFLOW,
    }
}

impl DevZones {
    /// The zones of a device with `config` (zoned, checked), and the limits
    /// its disk reports.
    pub(crate) fn new(config: &DeviceConfig) -> Result<(Arc<Self>, ZonedLimits)> {
        let layout = config
            .zone
            .layout(config.capacity_sectors, config.block_size)
            .map_err(|_| EINVAL)?;
        let blank = Zone {
            start: 0,
            len: 0,
            capacity: 0,
            wp: 0,
            kind: ZoneType::Conventional,
            cond: Cond::NotWp,
        };
        let mut zones = KVec::with_capacity(layout.nr_zones as usize, GFP_KERNEL)?;
        for _ in 0..layout.nr_zones {
            zones.push(blank, GFP_KERNEL)?;
        }
        let limits = ZonedLimits {
            zone_sectors: u32::try_from(layout.zone_sectors).map_err(|_| EINVAL)?,
            max_open_zones: layout.max_open,
            max_active_zones: layout.max_active,
            max_zone_append_sectors: layout.append_max_sectors,
        };
        let zones = Arc::pin_init(
            pin_init!(Self {
                zones <- new_mutex!(Zones::new(layout, zones), "rnull_split:zones"),
            }),
            GFP_KERNEL,
        )?;
        Ok((zones, limits))
    }

    /// Serve `rq` on a zoned device (moving data with `store` if it is
    /// memory-backed, failing it if it meets a range of `bad`). A zone
    /// append's sector goes to the request's data, for its completion.
    pub(crate) fn serve(
        &self,
        rq: &Request<NullQueue>,
        store: Option<&Store>,
        bad: Option<&BadBlockCheck>,
    ) -> Result {
        let sector = rq.sector();
        let sectors = u64::from(rq.sectors());
        let mgmt = match rq.command() {
            command @ (Command::Write | Command::ZoneAppend) => {
                let append = command == Command::ZoneAppend;
                let mut zones = self.zones.lock();
                let at = zones
                    .start_write(sector, sectors, append)
                    .map_err(to_error)?;
                // As C null_blk: bad sectors are met at the write pointer;
                // with `badblocks_partial_io` the sectors before are
                // written and the write pointer moves past them.
                let (written, status) = match bad.and_then(|bad| bad.meets(at, sectors)) {
                    Some(0) => return Err(EIO),
                    Some(part) => (part, Err(EIO)),
                    None => (sectors, Ok(())),
                };
                if let Some(store) = store {
                    // On failure the write pointer stays; an `ENOMEM`
                    // requeues the request, which then starts over.
                    store.transfer_rq_part(rq, at, written, GFP_NOIO)?;
                }
                zones.finish_write(at, written);
                if append && status.is_ok() {
                    rq.data_ref().set_append_sector(at);
                }
                return status;
            }
            Command::Read => {
                // As C null_blk: past a sequential zone's write pointer a
                // memory-backed disk reads 0xFF bytes. The data is copied
                // under the lock, as C reads under the zone's: a write or
                // reset of the zone comes before the read or after it.
                let zones = self.zones.lock();
                let valid = zones
                    .read_len(sector << SECTOR_SHIFT, u64::from(rq.bytes()))
                    .map_err(to_error)?;
                let status = serve_data(rq, store, bad, valid);
                drop(zones);
                return status;
            }
            Command::ZoneOpen => Mgmt::Open,
            Command::ZoneClose => Mgmt::Close,
            Command::ZoneFinish => Mgmt::Finish,
            Command::ZoneReset => Mgmt::Reset,
            Command::ZoneResetAll => Mgmt::ResetAll,
            // Flush, discard, write zeroes: as on any device.
            _ => return serve_data(rq, store, bad, u64::MAX),
        };
        self.zones
            .lock()
            .mgmt(mgmt, sector, |start, len| {
                if let Some(store) = store {
                    // A reset zone reads as zeroes again.
                    store.discard_sectors(start, len);
                }
            })
            .map_err(to_error)
    }

    /// Put the zone of `sector` in condition `cond` (read-only or offline),
    /// or back to empty if it is in it already: C null_blk's configfs
    /// `zone_readonly` and `zone_offline`. An emptied zone's data is
    /// forgotten. `EINVAL` for a sector past the end or in a conventional
    /// zone.
    pub(crate) fn set_cond(&self, sector: u64, cond: Cond, store: Option<&Store>) -> Result {
        self.zones
            .lock()
            .set_cond(sector, cond, |start, len| {
                if let Some(store) = store {
                    store.discard_sectors(start, len);
                }
            })
            .map_err(|_| EINVAL)
    }

    /// Report the zones from the one holding `sector`, at most `nr_zones`.
    pub(crate) fn report(&self, sector: u64, nr_zones: u32, report: &mut ZoneReport<'_>) -> Result {
        let first = self.zones.lock().zone_no(sector);
        for zno in first..first.saturating_add(nr_zones as usize) {
            // A copy, reported without the lock: reporting may sleep.
            let Some(zone) = self.zones.lock().zone(zno) else {
                break;
            };
            report.report(&to_kernel(zone))?;
        }
        Ok(())
    }
}

/// A zone as the kernel crate reports it.
fn to_kernel(zone: Zone) -> kzoned::Zone {
    kzoned::Zone {
        start: zone.start,
        len: zone.len,
        capacity: zone.capacity,
        wp: zone.wp,
        kind: match zone.kind {
            ZoneType::Conventional => kzoned::ZoneType::Conventional,
            ZoneType::SeqWriteRequired => kzoned::ZoneType::SeqWriteRequired,
        },
        cond: match zone.cond {
            Cond::NotWp => kzoned::ZoneCond::NotWp,
            Cond::Empty => kzoned::ZoneCond::Empty,
            Cond::ImpOpen => kzoned::ZoneCond::ImplicitOpen,
            Cond::ExpOpen => kzoned::ZoneCond::ExplicitOpen,
            Cond::Closed => kzoned::ZoneCond::Closed,
            Cond::Full => kzoned::ZoneCond::Full,
            Cond::ReadOnly => kzoned::ZoneCond::ReadOnly,
            Cond::Offline => kzoned::ZoneCond::Offline,
        },
    }
}
