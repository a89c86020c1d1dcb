{{ config(materialized='view') }}

select
    id as customer_id,
    name,
    note,
    upper(tier) as tier_code,
    signup_date,
    coalesce(credit, 0) as credit
from {{ ref('customers') }}
