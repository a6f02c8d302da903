-- The newest staged capture of every profile up to the window's end $until (its name is the owner
-- of the profile's listings). Ties within one night: the latest captured_at, then capture_id.
SELECT *
FROM staging.profiles
WHERE partition_date <= $until
QUALIFY row_number() OVER (PARTITION BY source, source_profile_id
                           ORDER BY partition_date DESC, captured_at DESC, capture_id DESC) = 1;
