-- Locations and service areas (docs/interface.md §2.4, §2.5, §4.5).
--
-- Both are tenant tables: row-level security compares organization_id with
-- app_current_org(), and request work reaches them only through withOrg.

-- updated_at moves on every real change, including the ones made by the
-- database itself (clearing the previous primary, ON DELETE SET NULL of a
-- service area's location). clock_timestamp() rather than now(): a transaction
-- that waited for a row lock must not stamp a time earlier than the change it
-- waited for; the + 1 microsecond keeps the value strictly increasing.
CREATE FUNCTION locations_touch_updated_at() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  NEW.updated_at := greatest(clock_timestamp(), OLD.updated_at + interval '1 microsecond');
  RETURN NEW;
END
$$;

CREATE TABLE locations (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  address_line1   text NOT NULL DEFAULT '' CHECK (length(address_line1) <= 200),
  address_line2   text CHECK (length(address_line2) <= 200),
  city            text NOT NULL DEFAULT '' CHECK (length(city) <= 200),
  state           text NOT NULL DEFAULT '' CHECK (length(state) <= 200),
  postal_code     text NOT NULL DEFAULT '' CHECK (length(postal_code) <= 200),
  country         text NOT NULL DEFAULT '' CHECK (length(country) <= 200),
  latitude        double precision CHECK (latitude BETWEEN -90 AND 90),
  longitude       double precision CHECK (longitude BETWEEN -180 AND 180),
  is_primary      boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT locations_coordinates_pair CHECK ((latitude IS NULL) = (longitude IS NULL)),
  -- Target of service_areas' composite foreign key, which keeps links inside one organization.
  CONSTRAINT locations_organization_id_id_key UNIQUE (organization_id, id)
);

-- At most one primary location per organization.
CREATE UNIQUE INDEX locations_one_primary_per_org ON locations (organization_id) WHERE is_primary;

CREATE TRIGGER locations_touch_updated_at
  BEFORE UPDATE ON locations
  FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*)
  EXECUTE FUNCTION locations_touch_updated_at();

ALTER TABLE locations ENABLE ROW LEVEL SECURITY;
CREATE POLICY locations_tenant ON locations
  USING (organization_id = app_current_org())
  WITH CHECK (organization_id = app_current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON locations TO switchboard_app;

CREATE TABLE service_areas (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  label           text NOT NULL CHECK (length(label) BETWEEN 1 AND 200),
  area_type       text CHECK (length(area_type) <= 200),
  value           text CHECK (length(value) <= 200),
  country         text CHECK (length(country) <= 200),
  radius_km       double precision CHECK (radius_km > 0 AND radius_km <= 20000),
  location_id     uuid,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  -- Foreign-key checks bypass row-level security, so a plain reference to
  -- locations (id) would accept another organization's location. Including
  -- organization_id makes the link valid only inside the same organization;
  -- deleting the location clears location_id alone.
  CONSTRAINT service_areas_location_fkey FOREIGN KEY (organization_id, location_id)
    REFERENCES locations (organization_id, id) ON DELETE SET NULL (location_id)
);
CREATE INDEX service_areas_location_idx ON service_areas (organization_id, location_id) WHERE location_id IS NOT NULL;

CREATE TRIGGER service_areas_touch_updated_at
  BEFORE UPDATE ON service_areas
  FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*)
  EXECUTE FUNCTION locations_touch_updated_at();

ALTER TABLE service_areas ENABLE ROW LEVEL SECURITY;
CREATE POLICY service_areas_tenant ON service_areas
  USING (organization_id = app_current_org())
  WITH CHECK (organization_id = app_current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON service_areas TO switchboard_app;
