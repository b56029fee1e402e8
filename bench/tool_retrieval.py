# ruff: noqa: E501  (the catalogue reads best one tool a line)
"""Tool retrieval over large tool sets: is the right tool offered, and how big is the prompt?

500 tools in 78 domains (weather, calendars, email, banking, stocks, maps, travel, smart home,
code hosting, devops, documents, media, ...) are generated from the catalogue below: each
domain lists its actions as `name | description | arguments`, and record types get CRUD
actions (`calendar_create_event`, `notes_search_notes`, ...) from one template per verb, so
near-identical siblings (create / update / delete / list / search) abound. 200 requests are
written as a person would ask, each labelled with its one right tool; they were written
against the tool names, not from the descriptions' words (half share no content word with
their tool's name and description), and include near misses on purpose: the weather now,
later or on a past date; a timer, an alarm or a reminder; an order's status or a parcel's
tracking; currency, units or cooking amounts.

For each tool count N (10 to 500), each request gets a registry of N tools built the way real
registries grow, a domain at a time: the right tool's domain (cut to N if larger), then other
domains in a seeded random order until N. The retriever ranks the registry's tools (the core
is offered always and not ranked), and recall@k is the share of requests whose right tool is
among the first k. Queries: the request alone; the request joined with the command the
--model imagines for it (`imagine_tool`, greedy: a signature and a line, as `step_query`
joins them for the agent); that command alone (close to what the model would type into
find_tools); and the request with a lexical embedder (hashed words, no model) as a baseline.

Prompt size is the agent's real first-step prompt for a sample of the requests: the messages
`RunLoop.messages` builds (the system prompt lists every offered command), and those messages as
a backend that cannot constrain decoding receives them, with the action schema (one union of
every offered command's arguments) appended; counted by the --model's own tokenizer with its
chat template, or in characters with `--model none`. Offering every tool is compared with
offering the core, find_tools and the k retrieved.

    python bench/tool_retrieval.py [--model qwen2.5-coder-1.5b] [--prompt-samples 10]
        [--hints-from bench/results/tool_retrieval.json]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.action import action_schema
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.loop import LoopConfig, RunLoop
from autonoma.llm import ScriptedModel
from autonoma.llm.types import Message
from autonoma.memory.embeddings import LexicalEmbedder, lexical_words
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import RunRecord, RunStore
from autonoma.tools import CORE_TOOLS, Tool, ToolRegistry, Workspace
from autonoma.tools.retrieval import (
    TextEmbedder,
    ToolRetriever,
    imagine_tool,
    needs_retrieval,
    step_query,
    tool_text,
)
from autonoma.tools.settings import RetrievalSettings
from bench.common import write_result

IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"
COUNTS = (10, 50, 100, 200, 500)
KS = (1, 3, 5, 8, 10, 12, 15, 20, 25, 30, 40, 50)
SHOWN = 5  # tools a find_tools call lists
PROMPT_KS = (8, 20, 30)

# -- the catalogue ---------------------------------------------------------------------------
# One line per action: name | description | arguments. Arguments: `name` (a string),
# `name:int|float|bool|date|datetime|list` (a list of strings), `name:a/b/c` (one of those),
# and a trailing `?` on the name for an optional one.

ACTIONS: dict[str, str] = {
    "weather": """
current | Current conditions at a location: temperature, feels-like, humidity, wind and sky cover. | location, units?:metric/imperial
forecast | Daily forecast for a location over the coming days: high and low temperature and chance of precipitation. | location, days:int
hourly | Hour-by-hour forecast for a location for the next 48 hours. | location, hours:int
alerts | Active severe weather warnings (storms, floods, heat) issued for a region. | region
air_quality | Air quality index and pollutant levels (PM2.5, ozone, NO2) at a location. | location
uv_index | Ultraviolet index forecast and sunburn risk for a location. | location, date?:date
pollen | Pollen count by type (tree, grass, weed) for a location. | location
history | Observed weather for a location on a past date. | location, date:date
sun_times | Sunrise, sunset and daylight length for a location and date. | location, date?:date
marine | Wave height, swell, sea temperature and tide times for a coastal spot. | spot
snow_report | Snow depth, fresh snowfall and open lifts at a ski resort. | resort
""",
    "calendar": """
find_free_time | Find slots when all the given people are free, within a date range. | attendees:list, duration_minutes:int, start:date, end:date
respond_invitation | Accept, decline or tentatively accept an invitation to an event. | event_id, response:accept/decline/tentative
list_calendars | List the calendars the user can see, with their colours and owners. |
share_calendar | Give another person read or edit access to a calendar. | calendar_id, email, role:reader/writer
set_working_hours | Set the hours and days the user is normally available for meetings. | days:list, start_time, end_time
""",
    "email": """
send | Compose and send an email to one or more addresses. | to:list, subject, body, cc?:list
reply | Reply to an email message, optionally to all recipients. | message_id, body, reply_all?:bool
forward | Forward an email with its attachments to other addresses. | message_id, to:list, note?
search | Search the mailbox by sender, subject, words, date or attachment. | query, limit?:int
read | Get the full content and headers of one email. | message_id
list_unread | List unread emails in the inbox, newest first. | limit?:int
archive | Move an email out of the inbox into the archive. | message_id
delete | Move an email to the trash. | message_id
label | Add or remove a label on an email. | message_id, label, remove?:bool
create_draft | Save an email as a draft without sending it. | to:list, subject, body
download_attachment | Save an attachment of an email to the workspace. | message_id, filename
set_vacation_reply | Turn on an automatic out-of-office reply between two dates. | message, start:date, end:date
unsubscribe | Unsubscribe from a mailing list using its List-Unsubscribe header. | message_id
""",
    "chat": """
send_message | Post a message to a channel or a direct conversation in the team chat. | channel, text
list_channels | List chat channels the user belongs to. |
create_channel | Create a new public or private chat channel. | name, private:bool
invite_to_channel | Add people to a chat channel. | channel, users:list
read_history | Read recent messages in a chat channel. | channel, limit:int
react | Add an emoji reaction to a chat message. | channel, message_ts, emoji
pin_message | Pin a message to the top of a channel. | channel, message_ts
set_status | Set the user's chat status text, emoji and expiry. | text, emoji?, expires_minutes?:int
schedule_message | Send a chat message later, at a given time. | channel, text, send_at:datetime
search_messages | Search all chat messages by words or author. | query
""",
    "sms": """
send_text | Send an SMS text message to a phone number. | phone, text
call | Place a phone call to a number and connect the user. | phone
voicemail_list | List voicemails with caller and transcription. |
block_number | Block calls and texts from a phone number. | phone
""",
    "contacts": """
merge_duplicates | Merge address book entries that look like the same person. |
upcoming_birthdays | List contacts whose birthday falls in the next days. | days:int
""",
    "stocks": """
quote | Latest price, change and volume for a stock ticker symbol. | symbol
price_history | Daily open, high, low and close prices of a stock between two dates. | symbol, start:date, end:date
company_profile | Company description, sector, employees and headquarters for a ticker. | symbol
earnings | Reported and expected earnings per share by quarter. | symbol
dividends | Dividend payment history and yield of a stock. | symbol
market_movers | Biggest gainers and losers on an exchange today. | exchange
analyst_ratings | Analyst buy, hold and sell ratings and price targets for a stock. | symbol
screener | Find stocks matching filters on market capitalisation, P/E ratio and sector. | sector?, min_market_cap?:float, max_pe?:float
options_chain | Call and put options with strikes and expiries for a ticker. | symbol, expiry?:date
watchlist_add | Add a ticker to the watchlist. | symbol
watchlist_remove | Remove a ticker from the watchlist. | symbol
watchlist_show | Show the watchlist's tickers with their latest prices. |
""",
    "portfolio": """
performance | Total value, gains and losses of the investment portfolio over a period. | period:1d/1m/1y/all
""",
    "banking": """
list_accounts | List bank accounts with their type and number. |
balance | Current and available balance of a bank account. | account_id
transactions | List transactions on an account between dates. | account_id, start:date, end:date
search_transactions | Find transactions by merchant, amount or category. | query
transfer | Move money between the user's own accounts. | from_account, to_account, amount:float
send_payment | Pay another person by IBAN or phone number. | recipient, amount:float, reference?
pay_bill | Pay a bill to a registered payee. | payee_id, amount:float, date?:date
freeze_card | Temporarily block a debit or credit card. | card_id
spending_by_category | Totals of spending per category for a month. | month
standing_orders | List recurring payments set up on an account. | account_id
statement | Download a monthly account statement as PDF. | account_id, month
""",
    "currency": """
convert | Convert an amount from one currency to another at the current exchange rate. | amount:float, from_currency, to_currency
rate_history | Historical exchange rate between two currencies. | base, quote, start:date, end:date
""",
    "crypto": """
price | Current price of a cryptocurrency in a fiat currency. | coin, currency
wallet_balance | Token balances held by a blockchain wallet address. | address, chain:ethereum/bitcoin/solana
gas_fees | Current network transaction fees on a blockchain. | chain
trade | Buy or sell an amount of a cryptocurrency on the exchange account. | coin, side:buy/sell, amount:float
""",
    "math": """
evaluate | Evaluate an arithmetic or algebraic expression exactly. | expression
solve_equation | Solve an equation or a system of equations for the unknowns. | equations:list, variables:list
derivative | Symbolic derivative of a function with respect to a variable. | function, variable
integral | Definite or indefinite integral of a function. | function, variable, lower?:float, upper?:float
matrix | Matrix operations: multiply, invert, determinant, eigenvalues. | operation:multiply/invert/determinant/eigenvalues, matrices:list
statistics | Mean, median, standard deviation and quartiles of a list of numbers. | values:list
prime_factors | Factor an integer into primes. | n:int
plot_function | Draw the graph of a function over an interval as an image. | function, x_min:float, x_max:float
regression | Fit a linear or polynomial regression to data points. | x:list, y:list, degree:int
random_number | Draw random integers in a range, or a random choice from a list. | low:int, high:int, count?:int
""",
    "units": """
convert | Convert a measurement between units of length, mass, volume, temperature or speed. | value:float, from_unit, to_unit
cooking_convert | Convert cooking amounts between cups, spoons, grams and millilitres for an ingredient. | amount:float, from_unit, to_unit, ingredient
""",
    "drive": """
upload | Upload a file from the workspace to cloud storage. | path, folder?
download | Download a file from cloud storage into the workspace. | file_id
list_folder | List the files and folders inside a cloud folder. | folder_id
search | Search cloud storage files by name or contents. | query
share | Share a cloud file with someone, with view or edit permission. | file_id, email, role:viewer/editor
create_link | Create a public link to a cloud file that anyone can open. | file_id, expires_days?:int
move | Move a cloud file to another folder. | file_id, folder_id
rename | Rename a cloud file or folder. | file_id, new_name
delete | Move a cloud file to the bin. | file_id
versions | List earlier versions of a cloud file, and restore one. | file_id, restore_version?
storage_usage | How much cloud storage is used and how much is left. |
""",
    "maps": """
directions | Route and turn-by-turn directions between two places by car, on foot, by bike or by transit. | origin, destination, mode:driving/walking/cycling/transit
geocode | Latitude and longitude of an address or landmark. | address
reverse_geocode | The address at a latitude and longitude. | lat:float, lon:float
nearby | Places of a kind near a location, such as cafes, pharmacies or ATMs. | location, kind, radius_m?:int
place_details | Opening hours, phone number, rating and reviews of a place. | place_id
distance_matrix | Travel times and distances between several origins and destinations. | origins:list, destinations:list
traffic | Current traffic congestion and incidents along a road or in an area. | area
elevation | Height above sea level at points or along a path. | points:list
timezone | The time zone of a place. | location
save_place | Save a place to the user's favourites list. | place_id, list_name?
""",
    "flights": """
search | Search flights between airports on dates, with prices. | origin, destination, depart:date, return_date?:date, passengers:int
book | Book a flight offer for named passengers. | offer_id, passengers:list
cancel_booking | Cancel a flight booking and request a refund. | booking_ref
status | Live departure, arrival, delay and gate of a flight by its number. | flight_number, date:date
check_in | Check in online for a booked flight and get boarding passes. | booking_ref
seat_map | Seat map with free seats for a booked flight, and seat selection. | booking_ref, seat?
baggage_rules | Baggage allowance and fees for an airline and fare class. | airline, fare_class
price_alert | Watch a route and notify when its fare drops below a price. | origin, destination, max_price:float
airport_info | Terminals, lounges, security wait times and ground transport at an airport. | airport
""",
    "hotels": """
search | Search hotels in a city for dates and guests, with prices. | city, check_in:date, check_out:date, guests:int
book | Book a hotel room offer. | offer_id, guest_name
cancel | Cancel a hotel reservation. | reservation_id
reviews | Guest reviews and ratings of a hotel. | hotel_id
modify_reservation | Change the dates or room type of a hotel reservation. | reservation_id, check_in?:date, check_out?:date
""",
    "rentals": """
search | Search holiday apartments and houses to rent by area, dates and bedrooms. | area, start:date, end:date, bedrooms:int
message_host | Send a message to the host of a holiday rental. | listing_id, text
""",
    "restaurants": """
search | Find restaurants by cuisine, area and price level. | area, cuisine?, price_level?:int
reserve | Reserve a table for a number of people at a time. | restaurant_id, party_size:int, time:datetime
cancel_reservation | Cancel a table reservation. | reservation_id
menu | Menu with dishes and prices of a restaurant. | restaurant_id
reviews | Diner reviews of a restaurant. | restaurant_id
""",
    "delivery": """
order | Order food for delivery from a restaurant's menu. | restaurant_id, items:list, address
track | Where a delivery order is and when it will arrive. | order_id
reorder | Repeat a past delivery order. | order_id
groceries | Order groceries for delivery from a supermarket in a time slot. | items:list, slot:datetime
""",
    "recipes": """
search | Find recipes by dish, ingredients, diet or cooking time. | query, diet?:vegetarian/vegan/gluten-free/none, max_minutes?:int
details | Ingredients and steps of a recipe. | recipe_id
scale | Rescale a recipe's ingredient amounts to a number of servings. | recipe_id, servings:int
substitute | Suggest replacements for an ingredient. | ingredient
meal_plan | A week of meals within a calorie target and diet. | calories:int, diet?
shopping_list | Combine the ingredients of several recipes into one shopping list. | recipe_ids:list
""",
    "nutrition": """
facts | Calories, protein, fat, carbohydrates and vitamins in an amount of a food. | food, grams:float
barcode | Product and nutrition data from a food barcode. | barcode
""",
    "shop": """
search_products | Search the store catalogue with filters on price, brand and rating. | query, max_price?:float
product_details | Full description, specifications and stock of a product. | product_id
add_to_cart | Add a product to the shopping cart. | product_id, quantity:int
remove_from_cart | Remove a product from the shopping cart. | product_id
view_cart | Show the shopping cart's items and total. |
checkout | Pay for the cart and place the order. | payment_method, address
order_status | Status and tracking of a placed order. | order_id
return_item | Start a return for an item of an order and get a return label. | order_id, item_id, reason
price_history | Price of a product over time across sellers. | product_id
wishlist_add | Save a product to the wishlist. | product_id
product_reviews | Customer reviews and questions about a product. | product_id
apply_coupon | Apply a discount code to the cart. | code
""",
    "parcels": """
track | Track a parcel by carrier and tracking number. | carrier, tracking_number
ship | Buy a shipping label and book a pickup for a parcel. | from_address, to_address, weight_kg:float
rates | Compare shipping prices and delivery times between carriers. | from_postcode, to_postcode, weight_kg:float
""",
    "music": """
play | Play a song, album, artist or playlist. | query
pause | Pause playback. |
next_track | Skip to the next track. |
queue | Add a song to the play queue. | track_id
search | Search the music catalogue for tracks, albums and artists. | query
lyrics | Lyrics of a song. | title, artist
volume | Set the speaker volume. | level:int
recommend | Recommend songs similar to a track or artist. | seed
now_playing | The track playing now. |
shuffle | Turn shuffle on or off. | on:bool
playlist_add_tracks | Add tracks to a playlist. | playlist_id, track_ids:list
""",
    "podcasts": """
search | Find podcasts and episodes by topic. | query
subscribe | Follow a podcast to get its new episodes. | podcast_id
latest_episodes | New episodes of the followed podcasts. |
play_episode | Play a podcast episode from a position. | episode_id, start_seconds?:int
""",
    "movies": """
search | Search films by title, genre, actor or year. | query
details | Plot, cast, runtime and ratings of a film. | movie_id
showtimes | Cinema showtimes for a film near a location on a date. | movie_id, location, date:date
buy_tickets | Buy cinema tickets for a showtime. | showtime_id, seats:int
where_to_stream | Streaming services where a film or series can be watched in a country. | title, country
watchlist_add | Add a film or series to the watchlist. | title_id
tv_schedule | TV guide: the programmes on a channel on a date. | channel, date:date
episode_guide | Seasons and episodes of a TV series. | series_id
""",
    "books": """
search | Find books by title, author or subject. | query
details | Summary, author, pages and ratings of a book. | isbn
library_availability | Whether a local library holds a book, and where. | isbn, library_id
borrow_ebook | Borrow an ebook from the library. | isbn
reading_list_add | Add a book to the reading list. | isbn
""",
    "news": """
headlines | Top news headlines by country and section. | country, section?:world/business/tech/sport/science
search | Search news articles by keyword and date. | query, from_date?:date
article | Full text of a news article. | url
follow_topic | Get alerts for new articles on a topic. | topic
fact_check | Look up published fact-checks of a claim. | claim
""",
    "social": """
post | Publish a post with text and images to the user's social media account. | text, images?:list
schedule_post | Publish a social media post at a later time. | text, publish_at:datetime
delete_post | Delete one of the user's posts. | post_id
reply | Reply to a comment or post. | post_id, text
mentions | Recent posts that mention the user. |
followers | Follower count and recent followers. |
analytics | Views, likes and shares of the user's posts over a period. | start:date, end:date
follow_user | Follow another account. | username
trending | Trending topics and hashtags. | country?
direct_message | Send a private message to another account. | username, text
""",
    "todo": """
complete | Mark a task as done. | task_id
projects | List task projects with their open task counts. |
overdue | Tasks past their due date. |
""",
    "notes": """
tag | Add a tag to a note. | note_id, tag
export | Export notes to Markdown or PDF. | note_ids:list, format:markdown/pdf
""",
    "reminders": """
set | Remind the user of something at a time. | text, at:datetime
list | Upcoming reminders. |
cancel | Cancel a reminder. | reminder_id
snooze | Postpone a reminder that has fired. | reminder_id, minutes:int
""",
    "clock": """
now | Current date and time in a time zone. | timezone
convert_timezone | Convert a time from one time zone to another. | time:datetime, from_zone, to_zone
date_diff | Days, weeks or months between two dates. | start:date, end:date
add_to_date | The date a number of days, weeks or months after a date. | date:date, amount:int, unit:days/weeks/months
public_holidays | Public holidays of a country in a year. | country, year:int
set_alarm | Set an alarm on the device. | time, label?, repeat_days?:list
start_timer | Start a countdown timer. | seconds:int, label?
stopwatch | Start, lap or stop the stopwatch. | action:start/lap/stop
world_clock | Current time in several cities at once. | cities:list
""",
    "smarthome": """
lights | Turn the lights in a room on or off. | room, on:bool
dim | Set the brightness and colour of lights. | room, brightness:int, color?
thermostat | Set the heating or cooling target temperature. | temperature:float, mode?:heat/cool/auto
lock | Lock or unlock a door lock. | door, locked:bool
camera_snapshot | Take a picture from a security camera. | camera
vacuum | Start or stop the robot vacuum, or send it to a room. | action:start/stop/dock, room?
scene | Activate a scene that sets several devices at once. | scene
energy_usage | Electricity used by the home, by device and day. | start:date, end:date
blinds | Open or close blinds and shades. | room, position:int
devices | List connected devices and their state. |
garage_door | Open or close the garage door. | open:bool
doorbell_history | Who rang the doorbell, with pictures. |
""",
    "fitness": """
log_workout | Record a workout with its type, duration and distance. | activity, minutes:int, distance_km?:float
steps | Steps walked per day. | start:date, end:date
heart_rate | Resting and workout heart rate readings. | date:date
sleep | Sleep duration and stages for a night. | date:date
log_meal | Record what was eaten and its calories. | description, calories?:int
water | Record a glass of water, or see today's total. | ml?:int
weight | Record body weight, or see its trend. | kg?:float
training_plan | A training plan towards a goal such as a 10 km run. | goal, weeks:int
""",
    "health": """
medication_reminder | Remind to take a medication on a schedule. | medication, times:list
symptom_checker | Possible causes and urgency for described symptoms. | symptoms:list, age:int
find_doctor | Find doctors by specialty and location who accept new patients. | specialty, location
book_appointment | Book an appointment with a doctor. | doctor_id, time:datetime
drug_interactions | Check whether medications interact. | medications:list
vaccination_records | The user's vaccination history. |
""",
    "language": """
translate | Translate text into a target language. | text, target
detect | Detect which language a text is written in. | text
define | Definitions of a word. | word
synonyms | Words with a similar meaning. | word
pronounce | Audio and phonetic spelling of a word. | word, language
spellcheck | Spelling mistakes in a text, with corrections. | text
grammar | Grammar and style problems in a text. | text
summarize | A short summary of a long text. | text, sentences:int
rhymes | Words that rhyme with a word. | word
etymology | Origin and history of a word. | word
""",
    "github": """
create_pull_request | Open a pull request from a branch. | repo, head, base, title
merge_pull_request | Merge an approved pull request. | repo, number:int
review_pull_request | Approve or request changes on a pull request, with comments. | repo, number:int, verdict:approve/request_changes, body
list_commits | Recent commits on a branch. | repo, branch
create_branch | Create a branch from a commit. | repo, name, from_ref
run_workflow | Start a CI workflow run. | repo, workflow, ref
workflow_runs | Recent CI workflow runs and their results. | repo
create_release | Tag and publish a release with notes. | repo, tag, notes
search_code | Search code across repositories. | query
file_contents | Read a file from a repository at a ref. | repo, path, ref?
""",
    "database": """
query | Run a read-only SQL query and return the rows. | sql
execute | Run a SQL statement that changes data. | sql
list_tables | Tables in the database. |
describe_table | Columns, types and indexes of a table. | table
export_csv | Export a query's result to a CSV file. | sql, path
backup | Back up the database to a file. | path
import_csv | Load a CSV file into a table. | path, table
""",
    "servers": """
deploy | Deploy a version of a service to an environment. | service, version, environment:staging/production
rollback | Roll a service back to its previous version. | service, environment
restart | Restart a service. | service
logs | Recent log lines of a service, filtered by level. | service, level?:debug/info/warning/error, lines:int
metrics | CPU, memory and request rate of a service. | service, minutes:int
scale | Change the number of instances of a service. | service, replicas:int
dns_record | Create or update a DNS record. | domain, type:A/AAAA/CNAME/TXT/MX, value
certificate | Expiry date and issuer of a website's TLS certificate. | domain
uptime | Uptime and response time of a website. | url
incidents | Open incidents and who is on call. |
ping | Whether a host answers, and its latency. | host
""",
    "hr": """
request_leave | Request days off. | start:date, end:date, kind:vacation/sick/parental
leave_balance | Days of leave left this year. |
payslip | The payslip for a month. | month
org_chart | Manager and reports of an employee. | employee
directory_lookup | Find a colleague's email, phone and office. | name
job_posting | Publish a job opening. | title, description, location
candidates | Applicants for a job opening and their stage. | job_id
schedule_interview | Arrange an interview with a candidate. | candidate_id, interviewers:list, time:datetime
expense_claim | Submit a work expense for reimbursement, with its receipt. | amount:float, category, receipt_path
timesheet | Record hours worked on a project. | project, hours:float, date:date
""",
    "crm": """
log_call | Record a call with a customer and its summary. | contact_id, summary
pipeline | Open deals by stage and value. |
sales_forecast | Expected revenue for a quarter from the pipeline. | quarter
""",
    "invoices": """
create | Draft an invoice for a customer with line items. | customer, items:list, due:date
send | Email an invoice to the customer. | invoice_id
list_unpaid | Invoices not yet paid, with days overdue. |
record_payment | Mark an invoice as paid. | invoice_id, amount:float
remind | Send a payment reminder for an overdue invoice. | invoice_id
""",
    "accounting": """
log_expense | Record a business expense. | amount:float, category, date:date
scan_receipt | Read a receipt image into an expense entry. | image_path
profit_and_loss | Income, expenses and profit over a period. | start:date, end:date
tax_estimate | Estimated income tax for a year. | year:int
vat_return | Prepare the VAT return for a quarter. | quarter
""",
    "education": """
course_search | Find online courses on a subject. | subject, level?:beginner/intermediate/advanced
enroll | Enrol in a course. | course_id
assignments | Upcoming assignments and their due dates. | course_id?
grades | Grades for courses. | term?
flashcards | Make flashcards from notes, or review the ones due. | deck, text?
quiz | Generate a quiz on a topic. | topic, questions:int
explain | Explain a concept at a level. | concept, level
""",
    "realestate": """
listings | Homes for sale or rent in an area, with filters. | area, kind:buy/rent, max_price?:float, bedrooms?:int
valuation | Estimated market value of a property. | address
mortgage | Monthly payment for a loan amount, interest rate and term. | amount:float, rate:float, years:int
book_viewing | Arrange a viewing of a listing. | listing_id, time:datetime
neighbourhood | Schools, crime and amenities of a neighbourhood. | area
""",
    "transit": """
departures | Next departures from a stop or station. | stop
journey | Public transport journey between two places at a time. | origin, destination, depart_at?:datetime
disruptions | Delays and closures on a transit line. | line
ticket | Buy a transit ticket or pass. | zone, kind:single/day/month
""",
    "trains": """
search | Train connections and fares between cities on a date. | origin, destination, date:date
book | Book seats on a train connection. | connection_id, passengers:int
""",
    "rides": """
request | Request a ride from a pickup point to a drop-off. | pickup, dropoff, kind?:standard/xl/premium
estimate | Price and pickup time estimate for a ride. | pickup, dropoff
cancel | Cancel a requested ride. | ride_id
""",
    "cars": """
rental_search | Rental cars at a location for dates. | location, start:date, end:date
parking | Parking spaces near a place, with prices. | location
ev_chargers | Electric vehicle charging stations near a place, with plug types. | location, plug?
fuel_prices | Petrol and diesel prices at nearby stations. | location
""",
    "bikes": """
nearby | Bike-share stations with free bikes and docks. | location
unlock | Unlock a shared bike or scooter. | vehicle_id
""",
    "sports": """
scores | Live and final scores of games. | league, date?:date
schedule | Upcoming fixtures of a team. | team
standings | League table. | league
player_stats | Season statistics of a player. | player
tickets | Tickets for a game. | game_id
""",
    "events": """
search | Concerts, shows and events in a city between dates. | city, start:date, end:date, category?
buy_tickets | Buy tickets for an event. | event_id, quantity:int
venue | Address, capacity and seating plan of a venue. | venue_id
""",
    "images": """
resize | Resize an image to a width and height. | path, width:int, height:int
crop | Crop an image to a box. | path, x:int, y:int, width:int, height:int
convert_format | Convert an image between PNG, JPEG, WebP and GIF. | path, format:png/jpeg/webp/gif
remove_background | Cut the subject out of an image onto a transparent background. | path
generate | Create an image from a text prompt. | prompt, size?
ocr | Extract the text in an image. | path
caption | Describe what an image shows. | path
upscale | Enlarge an image with added detail. | path, factor:int
compress | Reduce an image's file size. | path, quality:int
""",
    "audio": """
transcribe | Speech in an audio file to text. | path, language?
text_to_speech | Read text aloud into an audio file with a voice. | text, voice
trim | Cut an audio file to a start and end. | path, start:float, end:float
identify_song | Recognise a song from an audio clip. | path
""",
    "video": """
compress | Shrink a video file. | path, target_mb:int
trim | Cut a video to a time range. | path, start:float, end:float
extract_audio | Save the soundtrack of a video as an audio file. | path
subtitles | Generate subtitles for a video. | path, language
thumbnail | Grab a frame of a video as an image. | path, at_seconds:float
""",
    "pdf": """
merge | Combine PDF files into one. | paths:list, output
split | Split a PDF into pages or ranges. | path, ranges:list
to_text | Extract the text of a PDF. | path
sign | Add a signature image to a PDF. | path, signature_image
fill_form | Fill the fields of a PDF form. | path, values:list
from_document | Convert a Word or HTML document to PDF. | path
compress | Shrink a PDF file. | path
protect | Password-protect a PDF. | path, password
""",
    "spreadsheet": """
read_range | Read the cells of a spreadsheet range. | sheet_id, range
write_range | Write values into spreadsheet cells. | sheet_id, range, values:list
append_row | Add a row at the end of a sheet. | sheet_id, values:list
create_chart | Make a chart from a range of cells. | sheet_id, range, kind:bar/line/pie
create | Create a new spreadsheet. | title
""",
    "slides": """
create | New presentation from an outline. | title, outline:list
add_slide | Add a slide with a title and bullet points. | deck_id, title, bullets:list
export | Export a presentation to PDF. | deck_id
""",
    "search": """
web | Search the web and return result titles, links and snippets. | query
wikipedia | Summary of a Wikipedia article. | title, language?
papers | Search academic papers by topic, author or title. | query
patents | Search patents by keywords. | query
images | Search the web for images. | query
citations | Papers that cite a paper. | paper_id
""",
    "security": """
generate_password | Create a strong random password. | length:int, symbols:bool
breach_check | Whether an email address appeared in known data breaches. | email
totp_code | Current two-factor authentication code for an account. | account
vault_get | Get a saved login from the password vault. | site
vault_save | Save a login to the password vault. | site, username, password
scan_url | Check a link for phishing or malware. | url
""",
    "civic": """
passport_appointment | Book an appointment to renew a passport. | office, date:date
vote_info | Polling place and upcoming elections for an address. | address
tax_refund_status | Status of the user's tax refund. | year:int
report_issue | Report a pothole, broken street light or litter to the city. | kind, location, description
bin_collection | Which rubbish bins are collected on which days at an address. | address
""",
    "pets": """
vet_appointment | Book a vet visit for a pet. | pet, reason, time:datetime
food_reminder | Remind to buy or give pet food. | pet, at:datetime
walker | Book a dog walker. | date:date, minutes:int
""",
    "insurance": """
policy | Cover, excess and renewal date of an insurance policy. | policy_id
file_claim | Open an insurance claim with photos. | policy_id, description, photos?:list
claim_status | Progress of an insurance claim. | claim_id
quote | Quote for car, home or travel insurance. | kind:car/home/travel, details
""",
    "utilities": """
bill | Latest electricity, gas or water bill. | utility:electricity/gas/water
meter_reading | Submit a meter reading. | utility, reading:float
outage | Power or internet outages at an address. | address
mobile_usage | Mobile data, minutes and texts used this month. |
internet_speed | Test the internet connection speed. |
""",
    "surveys": """
create_form | Create a survey form with questions. | title, questions:list
responses | Responses collected by a form. | form_id
poll | A quick poll in a chat channel. | channel, question, options:list
""",
    "games": """
trivia | A trivia question in a category. | category
joke | Tell a joke. | topic?
chess_move | Best chess move for a position. | fen
dice | Roll dice. | sides:int, count:int
horoscope | Daily horoscope for a star sign. | sign
""",
    "gardening": """
plant_care | Watering, light and soil needs of a plant. | plant
identify_plant | Name a plant from a photo. | path
frost_dates | Last spring and first autumn frost dates for a location. | location
""",
    "photos": """
search | Find photos in the user's library by people, place or thing. | query
album_create | Make an album from photos. | name, photo_ids:list
share_album | Share a photo album with people. | album_id, emails:list
memories | Photos taken on this day in past years. |
""",
    "helpdesk": """
assign | Assign a support ticket to an agent or a team. | ticket_id, assignee
escalate | Raise a support ticket's priority and hand it to the next support tier. | ticket_id, reason
canned_reply | Answer a support ticket with a saved reply template. | ticket_id, template
""",
    "wiki": """
page_history | Revisions of a wiki page and who made them. | page_id
publish | Publish a draft wiki page to its space. | page_id
""",
    "inventory": """
low_stock | Items whose stock is below their reorder level. | warehouse?
adjust_stock | Add or subtract units of an item after a delivery or a stock count. | sku, change:int, reason
""",
    "vehicle": """
location | Where the user's connected car is, on a map. | vehicle_id
lock | Lock or unlock the car remotely. | vehicle_id, locked:bool
battery | Battery charge and range of an electric car. | vehicle_id
climate | Pre-heat or cool the car's cabin. | vehicle_id, temperature:float
book_service | Book the car in for a service at a garage. | vehicle_id, date:date
""",
    "printing": """
print_document | Send a document to a printer. | path, copies:int, duplex?:bool
printer_status | Ink, paper and queue of a printer. | printer
scan | Scan a page from the scanner into a file. | output_path
""",
    "cloud": """
list_instances | Virtual machines in a cloud account and their state. | region?
start_instance | Start a stopped virtual machine. | instance_id
stop_instance | Stop a running virtual machine. | instance_id
create_bucket | Create an object storage bucket. | name, region
cost_report | Cloud spending by service for a month. | month
""",
    "newsletter": """
subscribers | Subscribers of a mailing list, and its growth. | list_id
send_campaign | Send an email campaign to a mailing list. | list_id, subject, html
campaign_stats | Opens, clicks and unsubscribes of an email campaign. | campaign_id
""",
    "charity": """
donate | Donate an amount to a registered charity. | charity, amount:float, gift_aid?:bool
""",
}


@dataclass(frozen=True)
class Record:
    """A record type whose CRUD actions are generated from `VERBS`."""

    domain: str
    singular: str
    plural: str
    text: str  # "calendar event"
    texts: str  # "calendar events"
    fields: str  # the create action's arguments
    searchable: str  # what search looks in
    verbs: tuple[str, ...] = ("list", "get", "create", "update", "delete", "search")


RECORDS = [
    Record(
        "calendar",
        "event",
        "events",
        "calendar event",
        "calendar events",
        "title, start:datetime, end:datetime, location?, attendees?:list",
        "titles, locations and attendees",
    ),
    Record(
        "contacts",
        "contact",
        "contacts",
        "contact",
        "contacts",
        "name, phone?, email?, birthday?:date",
        "names, phone numbers and emails",
    ),
    Record(
        "portfolio",
        "holding",
        "holdings",
        "portfolio holding",
        "portfolio holdings",
        "symbol, shares:float, price:float",
        "symbols",
        ("list", "create", "update", "delete"),
    ),
    Record(
        "music",
        "playlist",
        "playlists",
        "playlist",
        "playlists",
        "name, public:bool",
        "names",
        ("list", "create", "delete"),
    ),
    Record(
        "todo",
        "task",
        "tasks",
        "to-do task",
        "to-do tasks",
        "title, due?:date, project?, priority?:low/normal/high",
        "titles and projects",
        ("list", "create", "update", "delete"),
    ),
    Record(
        "notes",
        "note",
        "notes",
        "note",
        "notes",
        "title, body",
        "titles and bodies",
    ),
    Record(
        "github",
        "issue",
        "issues",
        "repository issue",
        "repository issues",
        "repo, title, body, labels?:list",
        "titles, bodies and labels",
        ("list", "get", "create", "update", "search"),
    ),
    Record(
        "crm",
        "lead",
        "leads",
        "sales lead",
        "sales leads",
        "name, company, email?, source?",
        "names and companies",
        ("list", "create", "update", "search"),
    ),
    Record(
        "crm",
        "deal",
        "deals",
        "sales deal",
        "sales deals",
        "name, value:float, stage:prospect/proposal/won/lost",
        "names",
        ("list", "create", "update"),
    ),
    Record(
        "helpdesk",
        "ticket",
        "tickets",
        "support ticket",
        "support tickets",
        "subject, description, customer_email, priority?:low/normal/high/urgent",
        "subjects and descriptions",
    ),
    Record(
        "wiki",
        "page",
        "pages",
        "wiki page",
        "wiki pages",
        "title, body, space",
        "titles and bodies",
    ),
    Record(
        "inventory",
        "item",
        "items",
        "inventory item",
        "inventory items",
        "sku, name, quantity:int, location?",
        "SKUs and names",
    ),
]

VERBS: dict[str, tuple[str, str, str]] = {
    "list": ("list_{plural}", "List {texts}, most recent first, a page at a time.", "limit?:int"),
    "get": ("get_{singular}", "Fetch one {text} by its id, with all of its fields.", "{id}"),
    "create": ("create_{singular}", "Create a new {text} from its fields: {names}.", "{fields}"),
    "update": (
        "update_{singular}",
        "Update an existing {text}, given its id: change any of {names}.",
        "{id}, {optional}",
    ),
    "delete": ("delete_{singular}", "Delete a {text} by its id. This cannot be undone.", "{id}"),
    "search": ("search_{plural}", "Search {texts} by keywords in their {searchable}.", "query"),
}

# -- the requests ----------------------------------------------------------------------------
# As a person would ask, each with the one right tool.

REQUESTS: list[tuple[str, str]] = [
    # weather: now, later, hourly, warnings, a past date
    ("Do I need a jacket in Chicago right now?", "weather_current"),
    ("Will it rain in Oslo this weekend?", "weather_forecast"),
    ("Around what hour will the storm hit Boston tomorrow?", "weather_hourly"),
    ("Are there any tornado warnings out for Oklahoma?", "weather_alerts"),
    ("Is the smog bad enough in Delhi today that I should skip my run?", "weather_air_quality"),
    ("How hot was it in Paris on 14 July last year?", "weather_history"),
    # calendar
    ("Put lunch with Sam on my schedule for Friday at noon", "calendar_create_event"),
    ("Push my 2pm with Dana back to 4pm", "calendar_update_event"),
    ("Scrap the dentist appointment I had on Tuesday", "calendar_delete_event"),
    ("What's on my agenda tomorrow?", "calendar_list_events"),
    (
        "When is a time next week that Priya, Tom and I can all meet for an hour?",
        "calendar_find_free_time",
    ),
    ("Say yes to the offsite invite from Laura", "calendar_respond_invitation"),
    # email
    ("Write to jane@acme.com telling her the contract is signed", "email_send"),
    ("Answer Bob's last message and say I'll be there", "email_reply"),
    ("Pass the invoice mail from Stripe on to my accountant", "email_forward"),
    ("Find the mail from the landlord about the deposit", "email_search"),
    (
        "I'm away from 1 to 15 August, tell anyone who writes that I'm on holiday",
        "email_set_vacation_reply",
    ),
    (
        "Prepare a message to the team about Friday's release but don't send it yet",
        "email_create_draft",
    ),
    # team chat
    ("Tell the #design channel that the mockups are ready", "chat_send_message"),
    ("Make a private room for the launch team", "chat_create_channel"),
    ("Show me what people said in #random this morning", "chat_read_history"),
    ("Post the weekly reminder in #ops on Monday at 9", "chat_schedule_message"),
    # phone
    ("Text my mum that I've landed safely", "sms_send_text"),
    ("Ring the plumber on 555-0134", "sms_call"),
    # contacts
    ("Maria has a new number, 07700 900123, fix her entry", "contacts_update_contact"),
    ("Add the plumber, Jim Reeves, 555-0134, to my address book", "contacts_create_contact"),
    ("Whose birthdays are coming up this month?", "contacts_upcoming_birthdays"),
    # stocks and portfolio
    ("How is Apple trading at the moment?", "stocks_quote"),
    ("How did Tesla shares move over 2022?", "stocks_price_history"),
    ("Did Nvidia beat expectations last quarter?", "stocks_earnings"),
    ("Find me cheap tech companies with a P/E under 15", "stocks_screener"),
    ("I sold all my Intel, take it out of my investments", "portfolio_delete_holding"),
    ("How much have my investments gained this year?", "portfolio_performance"),
    # banking
    ("How much money is in my checking account?", "banking_balance"),
    ("Move 500 from savings to checking", "banking_transfer"),
    ("Send Tom 25 for the concert tickets", "banking_send_payment"),
    ("I lost my wallet, stop my card from working", "banking_freeze_card"),
    ("Did Netflix charge me twice?", "banking_search_transactions"),
    # money and units: near misses
    ("How many yen will I get for 300 dollars?", "currency_convert"),
    ("Has the pound got stronger against the euro since January?", "currency_rate_history"),
    ("What's bitcoin worth in euros?", "crypto_price"),
    ("Buy me half an ETH", "crypto_trade"),
    ("How far is 26.2 miles in kilometres?", "units_convert"),
    ("How many grams is a cup of flour?", "units_cooking_convert"),
    ("What is 350 Fahrenheit in Celsius for my oven?", "units_convert"),
    # maths
    ("What's 17% of 2,340 plus 12 squared?", "math_evaluate"),
    ("Find x if 3x + 7 = 2x - 5", "math_solve_equation"),
    ("What's the rate of change of x^3 sin x?", "math_derivative"),
    ("What's the average and spread of these test scores: 71, 85, 90, 64", "math_statistics"),
    ("Inverse of [[2,1],[1,3]]", "math_matrix"),
    # cloud storage
    ("Put report.pdf in my cloud backup", "drive_upload"),
    ("Let Sara edit the budget spreadsheet in my Drive", "drive_share"),
    ("Give me a link to the holiday photos anyone can open", "drive_create_link"),
    # maps
    ("How do I cycle from King's Cross to Greenwich?", "maps_directions"),
    ("What are the coordinates of the Eiffel Tower?", "maps_geocode"),
    ("Is the M25 jammed right now?", "maps_traffic"),
    ("What time zone is Kathmandu in?", "maps_timezone"),
    ("What time is it in Kathmandu right now?", "clock_now"),
    # flights
    ("Find me a cheap way to fly London to Lisbon on 3 May", "flights_search"),
    ("Is BA117 on time?", "flights_status"),
    ("Can I take two suitcases on my Lufthansa economy ticket?", "flights_baggage_rules"),
    ("Get my boarding pass for tomorrow's flight, booking XK42PL", "flights_check_in"),
    (
        "I can't travel any more, call off booking 7HJ2KQ and get my money back",
        "flights_cancel_booking",
    ),
    # places to stay
    ("Somewhere to stay in Vienna for two nights from Friday, two adults", "hotels_search"),
    ("Stretch my Vienna hotel stay by one night", "hotels_modify_reservation"),
    ("Find a three-bedroom cottage in Cornwall for a week in August", "rentals_search"),
    ("We're not going to Vienna after all, drop the hotel booking", "hotels_cancel"),
    # eating
    ("Somewhere good for sushi in Shoreditch that isn't too pricey", "restaurants_search"),
    ("Get us a table for four at Dishoom at 8 tonight", "restaurants_reserve"),
    ("Have a large pepperoni pizza brought to my flat", "delivery_order"),
    ("Where's my curry? It's been an hour", "delivery_track"),
    ("Get milk, eggs and bread brought round tomorrow morning", "delivery_groceries"),
    ("What can I make with chicken, leeks and cream in under 30 minutes?", "recipes_search"),
    ("I've run out of eggs, what can I bake with instead?", "recipes_substitute"),
    ("This lasagne feeds 4 but I have 10 guests, adjust the amounts", "recipes_scale"),
    ("How much protein is in 200 g of chickpeas?", "nutrition_facts"),
    ("Make me a list of what to buy for these three dishes", "recipes_shopping_list"),
    # shopping and parcels
    ("Find noise-cancelling headphones under 200", "shop_search_products"),
    ("Where's the order I placed last week?", "shop_order_status"),
    ("The shoes don't fit, I want to send them back", "shop_return_item"),
    ("Use the code SAVE10 on my order", "shop_apply_coupon"),
    ("Where's my DHL parcel 1234567890?", "parcels_track"),
    ("What's the cheapest way to post a 2 kg box to Berlin?", "parcels_rates"),
    # music and podcasts
    ("Put on some Miles Davis", "music_play"),
    ("Skip this song", "music_next_track"),
    ("What's the song on my speaker right now?", "music_now_playing"),
    ("What song is in this recording, clip.m4a?", "audio_identify_song"),
    ("Find me more bands like Radiohead", "music_recommend"),
    ("Any new episodes of the shows I follow?", "podcasts_latest_episodes"),
    # films, books, news
    ("Where can I watch Succession in the UK?", "movies_where_to_stream"),
    ("What times is Dune playing near me on Saturday?", "movies_showtimes"),
    ("Does the central library have a copy of Middlemarch?", "books_library_availability"),
    ("What are the big stories today?", "news_headlines"),
    ("Is it true that the Great Wall is visible from space?", "news_fact_check"),
    # social
    ("Tweet that our new version is live", "social_post"),
    ("Put my launch announcement up tomorrow at 9am", "social_schedule_post"),
    ("How many people saw my posts last month?", "social_analytics"),
    ("Take down the post I made by mistake", "social_delete_post"),
    # to-dos, notes, reminders
    ("Add 'renew passport' to my to-do list", "todo_create_task"),
    ("I've finished the slides, tick that off", "todo_complete"),
    ("Jot down that the wifi password is tiger42", "notes_create_note"),
    ("Find what I wrote about the garage door code", "notes_search_notes"),
    ("Nudge me to call Grandma at 6pm", "reminders_set"),
    ("Ask me again in 10 minutes", "reminders_snooze"),
    # time
    ("If it's 3pm in New York, what time is that in Sydney?", "clock_convert_timezone"),
    ("How many days until Christmas?", "clock_date_diff"),
    ("Wake me up at 6:30 on weekdays", "clock_set_alarm"),
    ("Let me know when 12 minutes are up", "clock_start_timer"),
    # smart home
    ("Kill the lights in the bedroom", "smarthome_lights"),
    ("Lock the front door", "smarthome_lock"),
    ("Get the robot to clean the kitchen", "smarthome_vacuum"),
    ("Movie night mode please", "smarthome_scene"),
    # fitness and health
    ("I ran 5k in 28 minutes this morning, put it in my log", "fitness_log_workout"),
    ("Get me ready for a half marathon in 12 weeks", "fitness_training_plan"),
    ("Can I take ibuprofen with my blood pressure pills?", "health_drug_interactions"),
    ("I've had a headache and a fever for two days, should I worry?", "health_symptom_checker"),
    # language
    ("How do you say 'where is the station' in German?", "language_translate"),
    ("What language is 'Dziękuję bardzo'?", "language_detect"),
    ("Proofread my cover letter for typos", "language_spellcheck"),
    ("Give me the gist of this long article in three sentences", "language_summarize"),
    ("Where does the word 'quarantine' come from?", "language_etymology"),
    # code hosting
    ("Open a bug saying the login page crashes on Safari", "github_create_issue"),
    ("Land PR #42 now that it's approved", "github_merge_pull_request"),
    ("Kick off the nightly build on main", "github_run_workflow"),
    ("Did the tests pass on my last push?", "github_workflow_runs"),
    ("Ship version 2.1.0 with these notes", "github_create_release"),
    # databases and servers
    ("How many users signed up last month? Check the users table", "database_query"),
    ("What columns does the orders table have?", "database_describe_table"),
    ("Dump last year's sales into a spreadsheet file", "database_export_csv"),
    ("Push build 1.4.2 of the API live", "servers_deploy"),
    ("Checkout is broken since the release, go back to the version before", "servers_rollback"),
    ("Show me the errors the payments service threw in the last hour", "servers_logs"),
    ("When does the certificate for example.com run out?", "servers_certificate"),
    ("Run five copies of the web service to handle the traffic", "servers_scale"),
    # work
    ("Book me off from 10 to 14 June for a holiday", "hr_request_leave"),
    ("How many vacation days do I have left?", "hr_leave_balance"),
    ("Who does Priya report to?", "hr_org_chart"),
    ("Claim back the 45 I spent on the client taxi", "hr_expense_claim"),
    ("Put 3 hours on Project Atlas for today", "hr_timesheet"),
    ("Note that I spoke to Acme's buyer and they want a demo", "crm_log_call"),
    ("How much are we likely to close this quarter?", "crm_sales_forecast"),
    ("A new prospect from the trade fair: Lena Park at Vexa", "crm_create_lead"),
    # invoices and accounts
    ("Bill Northwind 2,000 for the March consulting work", "invoices_create"),
    ("Who still owes us money?", "invoices_list_unpaid"),
    ("Chase Globex about the invoice that's a month late", "invoices_remind"),
    ("How much did the business make after costs in Q2?", "accounting_profit_and_loss"),
    ("Turn this photo of my lunch bill into an expense", "accounting_scan_receipt"),
    ("Roughly how much will I owe the taxman for this year?", "accounting_tax_estimate"),
    # learning
    ("I want to learn Python from scratch, what classes are there?", "education_course_search"),
    ("Test me with ten questions on the French Revolution", "education_quiz"),
    # homes
    ("Two-bed flats to rent in Bristol under 1,500 a month", "realestate_listings"),
    ("What would my house at 12 Elm Road sell for?", "realestate_valuation"),
    ("What would I pay each month on 300k over 25 years at 4.5%?", "realestate_mortgage"),
    # getting around
    ("When's the next bus from Oxford Circus?", "transit_departures"),
    ("Is the Northern line running normally?", "transit_disruptions"),
    ("Train from Paris to Amsterdam on Friday, how much?", "trains_search"),
    ("Get me a car to the airport from home", "rides_request"),
    ("How much would a cab to the airport cost right now?", "rides_estimate"),
    ("Where can I charge my Tesla near Oxford?", "cars_ev_chargers"),
    ("Where can I leave the car near the stadium?", "cars_parking"),
    ("Any Boris bikes free near Waterloo?", "bikes_nearby"),
    # sport and going out
    ("Did Arsenal win last night?", "sports_scores"),
    ("Where are Liverpool in the table?", "sports_standings"),
    ("What gigs are on in Berlin next weekend?", "events_search"),
    # media files
    ("Make this photo 800 pixels wide", "images_resize"),
    ("Cut me out of this picture so the background is see-through", "images_remove_background"),
    ("What does the writing on this photographed sign say?", "images_ocr"),
    ("Paint me a watercolour of a fox in the snow", "images_generate"),
    ("Write down what was said in interview.mp3", "audio_transcribe"),
    ("Read this paragraph out loud in a British voice and save it", "audio_text_to_speech"),
    ("Add English captions to my vlog", "video_subtitles"),
    ("Pull the music out of this clip as an mp3", "video_extract_audio"),
    # documents
    ("Join these three PDFs together", "pdf_merge"),
    ("Put my signature on the lease", "pdf_sign"),
    ("Get the words out of this PDF so I can edit them", "pdf_to_text"),
    ("Add a line for today's sales at the bottom of the tracker sheet", "spreadsheet_append_row"),
    ("Make a pie chart of the budget columns", "spreadsheet_create_chart"),
    ("Build a deck for Monday's pitch from this outline", "slides_create"),
    # looking things up
    ("Look up online who won the 1998 World Cup", "search_web"),
    ("Find research on microplastics in drinking water", "search_papers"),
    ("Give me the Wikipedia overview of the Ottoman Empire", "search_wikipedia"),
    # security
    ("Make me a hard-to-guess password, 20 characters", "security_generate_password"),
    ("Has my email been in any leaks?", "security_breach_check"),
    ("Is this link in the text message a scam?", "security_scan_url"),
    # home admin
    ("When do they pick up the recycling on my street?", "civic_bin_collection"),
    ("There's a huge pothole on Mill Lane, let the council know", "civic_report_issue"),
    ("Book Biscuit in at the vet for his jabs on Thursday", "pets_vet_appointment"),
    ("Someone hit my car in the car park, start a claim", "insurance_file_claim"),
    ("Is the internet down in my area?", "utilities_outage"),
    ("How much mobile data have I got left this month?", "utilities_mobile_usage"),
    # odds and ends
    ("Ask the team in #general whether they want pizza or tacos", "surveys_poll"),
    ("How often should I water my fiddle leaf fig?", "gardening_plant_care"),
    ("What's this flower in my photo?", "gardening_identify_plant"),
    ("Show me pictures from our trip to Rome", "photos_search"),
    # support, stock, car, printer, cloud
    ("The customer says their refund never arrived, log it for support", "helpdesk_create_ticket"),
    ("Pass this complaint up to a manager, it's urgent", "helpdesk_escalate"),
    ("Which products are about to run out in the warehouse?", "inventory_low_stock"),
    ("Where did I leave my car?", "vehicle_location"),
    ("Print two copies of the agenda", "printing_print_document"),
    ("How much are we spending on cloud servers this month?", "cloud_cost_report"),
]


# -- generating the tools --------------------------------------------------------------------

SCALARS: dict[str, Any] = {
    "": str,
    "int": int,
    "float": float,
    "bool": bool,
    "date": dt.date,
    "datetime": dt.datetime,
    "list": list[str],
}


def arguments(spec: str) -> dict[str, Any]:
    """Pydantic fields from `city, days:int, units?:metric/imperial`."""
    fields: dict[str, Any] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, _, kind = part.partition(":")
        optional = name.endswith("?")
        name = name.rstrip("?")
        kind_type: Any = (
            Literal.__getitem__(tuple(kind.split("/"))) if "/" in kind else SCALARS[kind]
        )
        fields[name] = (kind_type | None, None) if optional else (kind_type, ...)
    return fields


def _not_called(**arguments: Any) -> str:
    return "this benchmark's tools are never called"


def make_tool(name: str, description: str, spec: str) -> Tool:
    args: type[BaseModel] = create_model(
        f"{name}_args", __config__=ConfigDict(extra="forbid"), **arguments(spec)
    )
    return Tool(name, description, args, _not_called, wants_context=False)


def record_actions(record: Record) -> list[tuple[str, str, str]]:
    names = [part.split(":")[0].strip().rstrip("?") for part in record.fields.split(",")]
    optional = ", ".join(
        part.split(":")[0].strip().rstrip("?")
        + "?"
        + (":" + part.split(":")[1] if ":" in part else "")
        for part in record.fields.split(",")
    )
    values = {
        "singular": record.singular,
        "plural": record.plural,
        "text": record.text,
        "texts": record.texts,
        "names": ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0],
        "searchable": record.searchable,
        "id": f"{record.singular}_id",
        "fields": record.fields,
        "optional": optional,
    }
    out = []
    for verb in record.verbs:
        name, description, spec = VERBS[verb]
        out.append((name.format(**values), description.format(**values), spec.format(**values)))
    return out


def generate_tools() -> dict[str, list[Tool]]:
    """The catalogue's 500 tools, by domain, each domain's records first."""
    domains: dict[str, list[Tool]] = {}
    for record in RECORDS:
        for name, description, spec in record_actions(record):
            domains.setdefault(record.domain, []).append(
                make_tool(f"{record.domain}_{name}", description, spec)
            )
    for domain, block in ACTIONS.items():
        for line in block.strip().splitlines():
            name, description, spec = (part.strip() for part in line.split("|"))
            domains.setdefault(domain, []).append(make_tool(f"{domain}_{name}", description, spec))
    return domains


# -- the registries --------------------------------------------------------------------------


def registry_for(
    right: str, n: int, domains: dict[str, list[Tool]], rng: random.Random
) -> list[Tool]:
    """`n` tools holding `right`, added a domain at a time: its own (cut to n), then others."""
    home = next(d for d, tools in domains.items() if any(t.name == right for t in tools))
    own = domains[home]
    if len(own) > n:
        target = next(t for t in own if t.name == right)
        keep = {
            target.name,
            *(t.name for t in rng.sample([t for t in own if t is not target], n - 1)),
        }
        own = [t for t in own if t.name in keep]
    blocks = [own]
    others = [d for d in domains if d != home]
    rng.shuffle(others)
    count = len(own)
    for domain in others:
        if count >= n:
            break
        block = domains[domain]
        if count + len(block) > n:
            block = rng.sample(block, n - count)
        blocks.append(block)
        count += len(block)
    rng.shuffle(blocks)  # the right domain anywhere in the registry's order
    return [tool for block in blocks for tool in block]


# -- recall ----------------------------------------------------------------------------------

Query = str | list[str]


async def ranks(
    embedder: TextEmbedder,
    domains: dict[str, list[Tool]],
    queries: Sequence[tuple[Query, str]],
    counts: Sequence[int],
    seed: int = 0,
    text: Callable[[Tool], str] | None = None,
) -> dict[int, list[int]]:
    """For each tool count, the 0-based rank of each query's right tool in its registry (the
    i-th query's registry is the same whatever the query's text, for a given seed)."""
    current: list[Tool] = []
    kwargs: dict[str, Any] = {} if text is None else {"text": text}
    retriever = ToolRetriever(current, embedder, k=1, core=(), **kwargs)
    out: dict[int, list[int]] = {}
    for n in counts:
        out[n] = []
        for i, (query, right) in enumerate(queries):
            current[:] = registry_for(right, n, domains, random.Random(f"{seed}/{n}/{i}"))
            ranked = [r.tool.name for r in await retriever.rank(query)]
            out[n].append(ranked.index(right))
    return out


def recall_at(positions: Sequence[int], k: int) -> float:
    return sum(p < k for p in positions) / len(positions)


def smallest_k(positions: Sequence[int], target: float) -> int:
    """The least k whose recall@k reaches `target`."""
    ordered = sorted(positions)
    needed = -(-len(ordered) * round(target * 1000) // 1000)  # ceil, without float error
    return ordered[max(needed, 1) - 1] + 1


def recall_table(
    positions: dict[int, list[int]], settings: RetrievalSettings
) -> list[dict[str, Any]]:
    rows = []
    for n, pos in positions.items():
        rows.append(
            {
                "tools": n,
                "recall": {str(k): round(recall_at(pos, k), 3) for k in KS},
                "k_for_95": smallest_k(pos, 0.95),
                "k_for_99": smallest_k(pos, 0.99),
                "mrr": round(statistics.mean(1 / (p + 1) for p in pos), 3),
                # with the settings: every tool offered up to the threshold, else the core + k
                "offered": (
                    round(recall_at(pos, settings.k), 3)
                    if needs_retrieval(n + len(CORE_TOOLS), settings)
                    else 1.0
                ),
            }
        )
    return rows


def offered_or_found(
    recall: dict[str, dict[int, list[int]]], settings: RetrievalSettings
) -> list[dict[str, Any]]:
    """Per tool count and k: the share of requests whose right tool is offered (request and
    hint, top k) or would be found by a find_tools call worded as the hint (top SHOWN): an
    upper bound, for a model that searches whenever its tool is missing."""
    rows = []
    for n, offered in recall["request_and_hint"].items():
        found = recall["hint_alone"][n]
        row: dict[str, Any] = {"tools": n}
        for k in sorted({settings.k, 8, 20, 25, 30}):
            hits = [o < k or f < SHOWN for o, f in zip(offered, found, strict=True)]
            row[str(k)] = round(sum(hits) / len(hits), 3)
        rows.append(row)
    return rows


# -- the model's own words -------------------------------------------------------------------


async def hints(model: Any, requests: Sequence[tuple[str, str]]) -> list[str]:
    """The command the model imagines for each request (`imagine_tool`, greedy)."""
    out = []
    for i, (request, _) in enumerate(requests):
        out.append((await imagine_tool(model, request)).text.strip())
        if i % 20 == 0:
            print(f"hint {i}: {request} -> {out[-1]}", flush=True)
    return out


# -- prompt size -----------------------------------------------------------------------------

Counter = Callable[[list[Message]], Awaitable[int]]

ANSWER = {
    "thoughts": {k: "" for k in ("text", "reasoning", "plan", "criticism", "speak")},
    "command": {"name": "task_complete", "args": {"reason": "done"}},
}


@dataclass
class PromptSize:
    constrained: int  # the messages as sent to a backend that constrains decoding
    unconstrained: int  # with the action schema appended, as a backend that cannot sees them


async def prompt_size(
    tools: list[Tool], request: str, count: Counter, workdir: Path, store: RunStore
) -> PromptSize:
    """The agent's first-step prompt offering `tools`, for the task `request`."""
    registry = ToolRegistry(tools)
    model = ScriptedModel(lambda messages, request: ANSWER, constrained=False)
    agent = RunLoop(model, registry, store, config=LoopConfig(continuous=True))
    identity = AgentIdentity(
        name="ErrandGPT", role="an AI that gets everyday errands done", goals=[request]
    )
    workspace = Workspace(workdir / "workspace")
    run = RunRecord(
        id="bench",
        created_at=0,
        updated_at=0,
        goal=request,
        identity=identity.model_dump(),
        settings={},
        workspace=str(workspace.root),
        model="scripted",
        status="running",
    )
    messages = agent.messages(run, identity, workspace, [], BudgetSpent())
    await model.request(messages, output=action_schema(registry))
    sent = model.requests[-1].messages
    return PromptSize(
        constrained=await count([Message.model_validate(m) for m in messages]),
        unconstrained=await count(sent),
    )


async def prompt_sizes(
    embedder: TextEmbedder,
    domains: dict[str, list[Tool]],
    requests: Sequence[tuple[str, str]],
    counts: Sequence[int],
    count: Counter,
    ks: Sequence[int],
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Mean first-step prompt per tool count over `requests`: offering every tool, and for each
    k the core plus find_tools plus the k retrieved (what a run with retrieval offers)."""

    def mean(sizes: list[PromptSize]) -> dict[str, int]:
        return {
            "constrained": round(statistics.mean(p.constrained for p in sizes)),
            "unconstrained": round(statistics.mean(p.unconstrained for p in sizes)),
            "unconstrained_max": max(p.unconstrained for p in sizes),
        }

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.db")
        for n in counts:
            every: list[PromptSize] = []
            offered: dict[int, list[PromptSize]] = {k: [] for k in ks}
            tools_offered: dict[int, int] = {}
            for i, (request, right) in enumerate(requests):
                registry = [
                    *CORE_TOOLS,
                    *registry_for(right, n, domains, random.Random(f"{seed}/{n}/{i}")),
                ]
                every.append(await prompt_size(registry, request, count, Path(tmp), store))
                for k in ks:
                    retrieving: list[Tool] = [*registry]
                    retriever = ToolRetriever(retrieving, embedder, k=k)
                    retrieving.append(retriever.find_tools())
                    chosen = await retriever.select(request)
                    tools_offered[k] = len(chosen)
                    offered[k].append(await prompt_size(chosen, request, count, Path(tmp), store))
            rows.append(
                {
                    "tools": n,
                    "all": mean(every) | {"offered": len(CORE_TOOLS) + n},
                    "retrieval": {
                        str(k): mean(offered[k]) | {"offered": tools_offered[k]} for k in ks
                    },
                }
            )
            print(rows[-1], flush=True)
        store.close()
    return rows


async def char_count(messages: list[Message]) -> int:
    return sum(len(m.content or "") for m in messages)


# -- overlap between requests and tools ------------------------------------------------------

_STOP_WORDS = """
    a an the to of in on at for from by with and or is are be it its this that my me i you your we
    us our what whats how when where who which do does did can will would should any some all one
    two get give make put let tell show find
"""
STOP = frozenset(_STOP_WORDS.split())


def content_words(text: str) -> set[str]:
    return {w.rstrip("s") for w in lexical_words(text) if w not in STOP and len(w) > 1}


def overlap(requests: Sequence[tuple[str, str]], by_name: dict[str, Tool]) -> dict[str, float]:
    """How much the requests' words give away: the share of requests that share no content
    word with their right tool's text, and the mean share of a request's words found there."""
    none, shares = 0, []
    for request, right in requests:
        words = content_words(request)
        found = words & content_words(tool_text(by_name[right]))
        none += not found
        shares.append(len(found) / max(1, len(words)))
    return {
        "requests_sharing_no_word": round(none / len(requests), 3),
        "mean_share_of_words_in_tool_text": round(statistics.mean(shares), 3),
    }


def args_text(tool: Tool) -> str:
    """The ablation: the tool's text with its argument names."""
    names = ", ".join(tool.args_model.model_fields)
    return tool_text(tool) + (f" Arguments: {names}." if names else "")


# -- the run ---------------------------------------------------------------------------------


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--model",
        default="qwen2.5-coder-1.5b",
        help="embedded model whose tokenizer counts the prompt and who imagines the commands; "
        "'none' counts characters and imagines nothing",
    )
    parser.add_argument("--hints-from", type=Path, help="reuse the hints of an earlier result")
    parser.add_argument("--prompt-samples", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from autonoma.llm import EmbeddedModel, LLMSettings, ModelStore
    from autonoma.memory.embeddings import MiniLMEmbedder

    domains = generate_tools()
    tools = [t for block in domains.values() for t in block]
    by_name = {t.name: t for t in tools}
    assert len(tools) == len(by_name) == 500, len(tools)
    assert len(REQUESTS) == 200 and all(right in by_name for _, right in REQUESTS)
    settings = RetrievalSettings()
    minilm = MiniLMEmbedder()

    model = None
    if args.model != "none":
        model = EmbeddedModel(
            ModelStore().ensure(args.model),
            settings=LLMSettings(local_context=2048, local_slots=1),
        )
    try:
        imagined: list[str] | None = None
        hints_by = None
        if args.hints_from:
            earlier = json.loads(args.hints_from.read_text())
            imagined, hints_by = earlier["hints"], f"{earlier['hints_by']}, in {args.hints_from}"
        elif model is not None:
            imagined, hints_by = await hints(model, REQUESTS), args.model

        started = time.perf_counter()
        recall = {"request": await ranks(minilm, domains, REQUESTS, COUNTS, args.seed)}
        ranking_s = time.perf_counter() - started
        if imagined is not None:
            labels = [right for _, right in REQUESTS]
            joined = [
                (step_query(request, hint=hint), right)
                for (request, right), hint in zip(REQUESTS, imagined, strict=True)
            ]
            recall["request_and_hint"] = await ranks(minilm, domains, joined, COUNTS, args.seed)
            alone = list(zip(imagined, labels, strict=True))
            recall["hint_alone"] = await ranks(minilm, domains, alone, COUNTS, args.seed)
        recall["request_lexical"] = await ranks(
            LexicalEmbedder(), domains, REQUESTS, COUNTS, args.seed
        )
        recall["request_with_argument_names"] = await ranks(
            minilm, domains, REQUESTS, [500], args.seed, text=args_text
        )

        # one step's selection at 500 tools, warm (tool vectors cached, the query not)
        retriever = ToolRetriever([*CORE_TOOLS, *tools], minilm, k=settings.k)
        await retriever.select("warm up")
        timings = []
        for i, (request, _) in enumerate(REQUESTS[:50]):
            began = time.perf_counter()
            await retriever.select(f"{request} ({i})")
            timings.append((time.perf_counter() - began) * 1000)

        count: Counter = char_count
        unit = "characters"
        if model is not None:
            count, unit = model.count_prompt_tokens, f"{args.model} tokens"
        sample = random.Random(args.seed).sample(range(len(REQUESTS)), args.prompt_samples)
        ks = sorted({settings.k, *PROMPT_KS})
        sizes = await prompt_sizes(
            minilm, domains, [REQUESTS[i] for i in sample], COUNTS, count, ks, args.seed
        )
    finally:
        if model is not None:
            await model.aclose()

    misses = [
        {"request": REQUESTS[i][0], "right": REQUESTS[i][1], "rank": p + 1}
        for i, p in enumerate(recall["request"][500])
        if p >= settings.k
    ]
    result = {
        "tools": len(tools),
        "domains": len(domains),
        "requests": len(REQUESTS),
        "core_tools": len(CORE_TOOLS),
        "settings": settings.model_dump(),
        "embedder": minilm.name,
        "hints_by": hints_by,
        "overlap": overlap(REQUESTS, by_name),
        "recall": {name: recall_table(positions, settings) for name, positions in recall.items()},
        "offered_or_found": None if imagined is None else offered_or_found(recall, settings),
        "misses_at_k_500_tools": sorted(misses, key=lambda m: m["rank"]),
        "select_ms_500_tools": {
            "p50": round(statistics.median(timings), 2),
            "max": round(max(timings), 2),
        },
        "ranking_seconds_request_all_counts": round(ranking_s, 1),
        "prompt": {"unit": unit, "samples": args.prompt_samples, "per_count": sizes},
        "hints": imagined,
    }
    path = write_result("tool_retrieval", result)
    for name, rows in result["recall"].items():
        for row in rows:
            print(name, row["tools"], row["recall"], "k95", row["k_for_95"])
    plot(json.loads(path.read_text()))


def plot(data: dict[str, Any], out: Path = IMAGES / "tool_retrieval.svg") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = data["settings"]["k"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.9))
    curves = (
        ("request_and_hint", "request + imagined command", "C2"),
        ("request", "request (MiniLM)", "C0"),
        ("request_lexical", "request (lexical, no model)", "C1"),
    )
    largest = max(row["tools"] for row in data["recall"]["request"])
    for name, label, colour in curves:
        for row in data["recall"].get(name, []):
            if row["tools"] not in (50, largest):
                continue
            left.plot(
                [int(x) for x in row["recall"]],
                list(row["recall"].values()),
                "-" if row["tools"] == largest else ":",
                color=colour,
                marker="o",
                ms=3,
                label=f"{label}, {row['tools']} tools",
            )
    left.axhline(0.95, color="grey", lw=1, ls="--")
    left.axvline(k, color="grey", lw=1, ls=":")
    left.set_xlabel("k (tools offered besides the core)")
    left.set_ylabel(f"recall@k ({data['requests']} requests)")
    left.set_ylim(0, 1.02)
    left.set_title("Is the right tool offered?")
    left.grid(alpha=0.3)
    left.legend(fontsize=7, loc="lower right")

    rows = data["prompt"]["per_count"]
    counts = [r["tools"] for r in rows]
    for key, label, style in (
        ("unconstrained", "schema in the prompt", "-o"),
        ("constrained", "schema as a grammar", ":o"),
    ):
        right.plot(
            counts, [r["all"][key] for r in rows], "C3" + style, ms=3, label=f"every tool, {label}"
        )
        shown_ks = sorted({8, k} & {int(x) for x in rows[0]["retrieval"]})
        for shown, colour in zip(map(str, shown_ks), ("C0", "C4"), strict=False):
            right.plot(
                counts,
                [r["retrieval"][shown][key] for r in rows],
                colour + style,
                ms=3,
                label=f"core + {shown}, {label}",
            )
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("tools in the registry")
    right.set_ylabel(f"first-step prompt ({data['prompt']['unit']})")
    right.set_title("Prompt size")
    right.grid(alpha=0.3, which="both")
    right.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    print(f"wrote {out}")
    return out


if __name__ == "__main__":
    asyncio.run(main())
